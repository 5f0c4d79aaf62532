import sys

from tokfx.cli.main import main

sys.exit(main())
