import sys
from pathlib import Path

# Let tests import their shared helpers as a plain module.
sys.path.insert(0, str(Path(__file__).resolve().parent))
