import sys

from .cli import main

if __name__ == "__main__":  # not when a worker process (the language server's) imports it
    sys.exit(main())
