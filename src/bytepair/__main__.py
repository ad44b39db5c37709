import sys

from bytepair.cli.main import main

sys.exit(main())
