"""The benchmarks at toy sizes, so `make bench` cannot rot unnoticed (figures are not judged)."""

from __future__ import annotations

from bench import callbacks, commands, sweep


async def test_sweep_bench_runs_a_small_sweep() -> None:
    result = await sweep.measure(20)
    assert result["patrons"] == 20 and result["messages"] == 2
    assert result["failures"] == {}
    assert "CPU" in "\n".join(sweep.report_lines(result))


async def test_commands_bench_times_each_loans() -> None:
    figures = await commands.run(chats=2, latency_commands=4, throughput_commands=6, pinned=False)
    assert len(figures.added_ms) == 4 and figures.throughput > 0
    assert "bot's added latency" in "\n".join(figures.lines())


async def test_callbacks_bench_connects_every_patron() -> None:
    result = await callbacks.run(patrons=4, concurrency=2)
    assert result.connected == 4 and result.cross_wired == 0
