"""Material types as the platform names them (in Danish), for search results and lists.

The platform sends Danish names ("Bog", "Lydbog (net)"); `bot.texts.render.material_type`
maps the ones below to these keys, and shows any other as the platform gave it.
"""

from __future__ import annotations

from bot.texts.catalog import Message, _

MESSAGES: tuple[Message, ...] = (
    # TRANSLATORS: material types; Danish: the platform's own names, as in the comments.
    # Bog
    _("material.book", "Book"),
    # E-bog
    _("material.ebook", "E-book"),
    # Billedbog
    _("material.picture_book", "Picture book"),
    # Tegneserie
    _("material.comic", "Comic"),
    # Lydbog (net)
    _("material.audiobook_online", "Audiobook (online)"),
    # Lydbog (cd)
    _("material.audiobook_cd", "Audiobook (CD)"),
    # Lydbog (cd-mp3)
    _("material.audiobook_mp3", "Audiobook (MP3 CD)"),
    # Film (dvd)
    _("material.film_dvd", "Film (DVD)"),
    # Film (blu-ray)
    _("material.film_bluray", "Film (Blu-ray)"),
    # Film (net)
    _("material.film_online", "Film (online)"),
    # Musik (cd)
    _("material.music_cd", "Music (CD)"),
    # Node
    _("material.sheet_music", "Sheet music"),
    # Tidsskrift
    _("material.periodical", "Periodical"),
    # Artikel
    _("material.article", "Article"),
    # Podcast
    _("material.podcast", "Podcast"),
    # Brætspil
    _("material.board_game", "Board game"),
)
