import sys

from library_bot.cli import main

sys.exit(main())
