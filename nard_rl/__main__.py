import sys

from nard_rl.cli import main

sys.exit(main())
