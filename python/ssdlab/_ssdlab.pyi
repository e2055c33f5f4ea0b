"""Type stubs of the native module (the Python API is in ``ssdlab/__init__.py``)."""

from typing import List, Optional, Tuple

__version__: str

class SsdlabError(Exception): ...

def run(
    preset: str,
    scheme: Optional[str],
    sets: List[str],
    trace: Optional[str],
    synth: Optional[str],
    seed: int,
    verify: bool,
    limit: Optional[int],
    format: Optional[str],
    time_unit: Optional[str],
    device: Optional[int],
    requests: bool,
) -> Tuple[str, Optional[str]]: ...
def config(preset: str, scheme: Optional[str], sets: List[str]) -> str: ...
def presets() -> List[Tuple[str, str]]: ...
def schemes() -> List[Tuple[str, str, str]]: ...
