import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

from . import experiment as experiment

from ._ssdlab import SsdlabError as SsdlabError

__version__: str
Sets = Union[Mapping[str, Any], Iterable[str], None]

def flatten(tree: Mapping[str, Any], prefix: str = ...) -> Dict[str, Any]: ...

class Result:
    summary: Dict[str, Any]
    summary_json: str
    def to_pandas(self) -> Any: ...
    def requests(self) -> Any: ...

def run(
    preset: str = ...,
    scheme: Optional[str] = ...,
    trace: Optional[str] = ...,
    synth: Optional[str] = ...,
    set: Sets = ...,
    seed: int = ...,
    verify: bool = ...,
    limit: Optional[int] = ...,
    format: Optional[str] = ...,
    time_unit: Optional[str] = ...,
    device: Optional[int] = ...,
    requests: bool = ...,
    skip: int = ...,
    extend: Optional[str] = ...,
    timeline: Optional[Union[str, "os.PathLike[str]"]] = ...,
    flows: Optional[Iterable[Mapping[str, Any]]] = ...,
    alone: bool = ...,
) -> Result: ...
class Failure:
    index: int
    point: Dict[str, Any]
    error: str

class SweepResults(List[Optional[Result]]):
    failures: List[Failure]
    def ok(self) -> List[Result]: ...

def sweep(
    points: Iterable[Mapping[str, Any]],
    backend: str = ...,
    jobs: Optional[int] = ...,
    address: Optional[str] = ...,
    errors: str = ...,
) -> SweepResults: ...
def synth(out: Union[str, "os.PathLike[str]"], **spec: Any) -> int: ...
def extend(
    trace: Union[str, "os.PathLike[str]"],
    out: Union[str, "os.PathLike[str]"],
    requests: int,
    seed: int = ...,
    format: Optional[str] = ...,
    **keys: Any,
) -> int: ...
def config(preset: str = ..., scheme: Optional[str] = ..., set: Sets = ...) -> Dict[str, Any]: ...
def presets() -> Dict[str, str]: ...
def schemes() -> Dict[str, Dict[str, str]]: ...
