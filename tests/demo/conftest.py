import sys
from pathlib import Path

# metering's in-memory repository (tests/metering/support.py) runs the year's meters and reads
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "metering"))
