"""Layer: pure rules: urgency, reminder keys, renewals, ISIL, the polling plan (no I/O)."""
