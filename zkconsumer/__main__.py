import sys

from zkconsumer.cli.main import main

sys.exit(main())
