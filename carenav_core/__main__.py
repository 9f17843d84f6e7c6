import sys

from carenav_core.cli import main

sys.exit(main())
