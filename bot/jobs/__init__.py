"""Layer: scheduled work: the reminder sweep and every job of `library-bot run`."""
