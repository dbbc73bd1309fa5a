"""ai_hwaccel: find the AI accelerators of a Linux machine and plan models on them.

A thin binding of libai_hwaccel (include/ai_hwaccel.h): JSON in, JSON out.

    import ai_hwaccel

    registry = ai_hwaccel.detect()                        # dict, this machine
    for d in ai_hwaccel.devices(registry):                # Device dataclasses
        print(d.id, d.name, d.memory_bytes)
    plan = ai_hwaccel.plan(model="Llama-3.1-70B", engine="vllm")
    print(plan.fits, plan.strategy, plan.engine_args.get("vllm"))
    for row in ai_hwaccel.fit():                          # catalog models that fit
        print(row["model"], row["quant"], row["decode_tokens_per_s"])

A model may be given as one string wherever one is taken (model=,
training teacher/reference/reward/critic): a catalog name or Hugging Face id
("Llama-3.1-8B", "meta-llama/Llama-3.1-8B"), a path ("/models/x.gguf"), or a
size with a unit ("70b"); the library reads it as the CLI reads --model
(docs/requests.md, "model").  The object forms ({"params_b": 70}, ...)
still work.

Every function raises HwaccelError(code, message) when the library answers
an error object; `code` is one of the stable codes of ai_hwaccel.h
("invalid_json", "invalid_argument", "unknown_model", "model_file",
"too_large", "detection_failed", "forked_child", "internal").

Requests and options are dicts (or JSON text); keyword arguments are merged
into them: detect(sysroot="/host", no_exec=True).  The *_json functions
return the answer's text unparsed, for passing on.

The library is loaded on the first call, not at import (fork safety, see
_lib.py); calls release the GIL and may run in threads.
"""

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from . import _lib
from ._lib import set_backend
from .hub import FetchError, fetch_model

__all__ = [
    "HwaccelError",
    "Device",
    "Shard",
    "Plan",
    "version",
    "abi_version",
    "library_path",
    "backend_name",
    "set_backend",
    "detect",
    "detect_json",
    "devices",
    "suggest_quant",
    "suggest_quant_json",
    "plan_sharding",
    "plan_sharding_json",
    "plan",
    "estimate_training",
    "estimate_training_json",
    "models",
    "models_json",
    "fit",
    "fit_json",
    # rent (issue 26)
    "rent",
    "rent_json",
    "fetch_model",
    "FetchError",
]

__version__ = "0.2.0"


class HwaccelError(Exception):
    """The library answered {"error": {"code": ..., "message": ...}}."""

    def __init__(self, code: str, message: str, details: Optional[Dict[str, Any]] = None):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message
        self.details = details or {}


def version() -> str:
    """The version of the loaded library, e.g. "0.2.0"."""
    return _lib.backend().version()


def abi_version() -> int:
    """The ABI version of the loaded library (checked at load)."""
    return _lib.backend().abi_version()


def library_path() -> str:
    """The path or name the library was loaded from."""
    return _lib.backend().path


def backend_name() -> str:
    """ "ctypes" or "cffi": the binding in use."""
    return _lib.backend().name


def _encode(request, kwargs) -> Optional[bytes]:
    if request is None and not kwargs:
        return None
    if isinstance(request, (str, bytes)):
        if kwargs:
            raise TypeError("keyword arguments cannot be merged into a JSON text request")
        data = request.encode("utf-8") if isinstance(request, str) else request
        if b"\0" in data:
            # The C functions read up to the first NUL: '{}\0{"sysroot":"/x"}'
            # would silently detect "/" instead of /x.
            raise HwaccelError(
                "invalid_argument",
                "request holds a NUL byte at offset %d; the library reads text only up to the first NUL"
                % data.index(b"\0"),
            )
        return data
    merged = dict(request or {})
    merged.update(kwargs)
    return json.dumps(merged).encode("utf-8")


def _call_text(fn: str, request, kwargs) -> str:
    text = _lib.backend().call(fn, _encode(request, kwargs))
    # Success answers never start with an "error" member; parse only errors.
    if text.lstrip().startswith('{"error"'):
        env = json.loads(text).get("error") or {}
        raise HwaccelError(
            str(env.get("code", "internal")), str(env.get("message", "")), env.get("details")
        )
    return text


def detect_json(options=None, **kwargs) -> str:
    """hwaccel_detect_json: the registry of this machine, as JSON text."""
    return _call_text("hwaccel_detect_json", options, kwargs)


def detect(options=None, **kwargs) -> Dict[str, Any]:
    """hwaccel_detect_json: the registry of this machine, as a dict."""
    return json.loads(detect_json(options, **kwargs))


def suggest_quant_json(request=None, **kwargs) -> str:
    return _call_text("hwaccel_suggest_quant", request, kwargs)


def suggest_quant(request=None, **kwargs) -> Dict[str, Any]:
    """hwaccel_suggest_quant: the best precision for the model, as a dict."""
    return json.loads(suggest_quant_json(request, **kwargs))


def plan_sharding_json(request=None, **kwargs) -> str:
    return _call_text("hwaccel_plan_sharding", request, kwargs)


def plan_sharding(request=None, **kwargs) -> Dict[str, Any]:
    """hwaccel_plan_sharding: how to spread the model over devices, as a dict."""
    return json.loads(plan_sharding_json(request, **kwargs))


def estimate_training_json(request=None, **kwargs) -> str:
    return _call_text("hwaccel_estimate_training", request, kwargs)


def estimate_training(request=None, **kwargs) -> Dict[str, Any]:
    """hwaccel_estimate_training: training memory per device, as a dict."""
    return json.loads(estimate_training_json(request, **kwargs))


def models_json(request=None, **kwargs) -> str:
    """hwaccel_models_json: the model catalog, as JSON text."""
    return _call_text("hwaccel_models_json", request, kwargs)


def models(request=None, **kwargs) -> List[Dict[str, Any]]:
    """hwaccel_models_json: the catalog models, as a list of dicts (name,
    hf_id, params, layers, max_context, checkpoints, source...).
    models(filter="llama", quant="fp8") keeps the models whose names
    contain "llama" and that publish an fp8 checkpoint."""
    return json.loads(models_json(request, **kwargs))["models"]


def fit_json(request=None, **kwargs) -> str:
    """hwaccel_fit_json: every catalog model planned on a machine, as JSON text."""
    return _call_text("hwaccel_fit_json", request, kwargs)


def fit(request=None, **kwargs) -> List[Dict[str, Any]]:
    """hwaccel_fit_json: every catalog model the filter keeps, planned on
    this machine (or on registry=...), as a list of dicts (model, params,
    fits, quant, strategy, devices, max_context_length,
    decode_tokens_per_s, validated_on, refusal, refusal_text, no_command):
    the models that fit first, larger first.  fits is None, as a plan's
    is, where memory that is not known decides: no device's memory is
    known (refusal "no_device"), or GPUs whose memory is unknown were left
    out and, counted, might hold the model, make up the devices asked or
    run a level no device of known memory runs (refusal
    "insufficient_memory", "too_few_devices" or "unsupported"; a CPU of
    unknown RAM under include_cpu or cpu_offload; docs/requests.md).
    fit(filter="qwen", context_length=32768, engine="vllm")."""
    return json.loads(fit_json(request, **kwargs))["models"]


def rent_json(request=None, **kwargs) -> str:
    return _call_text("hwaccel_rent_json", request, kwargs)


def rent(request=None, **kwargs) -> Dict[str, Any]:
    """hwaccel_rent_json: the catalog's machine types that run the model,
    ranked by cost per million output tokens, as a dict.  The filters go in
    a "rent" object: rent(model={"name": "Llama-3.1-70B"},
    rent={"providers": ["aws"], "max_price_per_hour": 50})."""
    return json.loads(rent_json(request, **kwargs))


@dataclass
class Device:
    """One device of a registry.  Fields the library did not know are None
    (it omits unknown values rather than guessing); `raw` has every field."""

    id: str
    kind: str
    family: str
    available: bool
    name: Optional[str] = None
    vendor: Optional[str] = None
    memory_bytes: Optional[int] = None
    memory_free_bytes: Optional[int] = None
    memory_bandwidth_gb_s: Optional[float] = None
    pci_bus_id: Optional[str] = None
    numa_node: Optional[int] = None
    quantizations: List[str] = field(default_factory=list)
    # Utilisation, power, temperature... as the registry reports them.
    telemetry: Optional[Dict[str, Any]] = None
    # AMD compute partition (mode, parent or children), as the registry.
    partition: Optional[Dict[str, Any]] = None
    # The NICs nearest the device on the PCIe tree (name, path).
    nics: Optional[List[Dict[str, Any]]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Device":
        return cls(
            id=d["id"],
            kind=d["kind"],
            family=d["family"],
            available=bool(d.get("available", False)),
            name=d.get("name"),
            vendor=d.get("vendor"),
            memory_bytes=d.get("memory_bytes"),
            memory_free_bytes=d.get("memory_free_bytes"),
            memory_bandwidth_gb_s=d.get("memory_bandwidth_gb_s"),
            pci_bus_id=d.get("pci_bus_id"),
            numa_node=d.get("numa_node"),
            quantizations=list(d.get("quantizations") or []),
            telemetry=d.get("telemetry"),
            partition=d.get("partition"),
            nics=d.get("nics"),
            raw=d,
        )


def devices(registry: Optional[Dict[str, Any]] = None, **detect_options) -> List[Device]:
    """The devices of a registry (detected now when none is given)."""
    if registry is None:
        registry = detect(**detect_options)
    return [Device.from_dict(d) for d in registry.get("devices") or []]


@dataclass
class Shard:
    device_id: str
    layer_start: Optional[int] = None
    layer_end: Optional[int] = None
    memory_bytes: Optional[int] = None
    memory_available_bytes: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Plan:
    """A sharding plan.  `fits` False is an answer, not an error: the
    explanation says why; None where memory that is not known decides
    (unknown, not no): no device's memory is known (refusal code
    no_device), or GPUs whose memory is unknown were left out and, counted,
    might hold the model, make up the devices asked or run a level no
    device of known memory runs (insufficient_memory, too_few_devices or
    unsupported; a CPU of unknown RAM under include_cpu or cpu_offload;
    docs/requests.md).  `raw` has every field of the answer."""

    fits: Optional[bool]
    strategy: Optional[str] = None
    quant: Optional[str] = None
    shards: List[Shard] = field(default_factory=list)
    engine_args: Dict[str, List[str]] = field(default_factory=dict)
    explanation: List[str] = field(default_factory=list)
    warnings: List[Any] = field(default_factory=list)
    # The memory budget the plan was made under (engine, memory_fraction...).
    budget: Optional[Dict[str, Any]] = None
    # Devices present (or named) that the plan leaves unused.
    idle_devices: Optional[List[str]] = None
    # Per engine, the checkpoint to load (repo, quant, GGUF type...).
    load: Optional[Dict[str, Dict[str, Any]]] = None
    # Per engine, the environment that numbers devices as the flags do.
    engine_env: Optional[Dict[str, Dict[str, str]]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Plan":
        return cls(
            fits=None if d.get("fits") is None else bool(d["fits"]),
            strategy=d.get("strategy"),
            quant=d.get("quant"),
            shards=[
                Shard(
                    device_id=s["device_id"],
                    layer_start=s.get("layer_start"),
                    layer_end=s.get("layer_end"),
                    memory_bytes=s.get("memory_bytes"),
                    memory_available_bytes=s.get("memory_available_bytes"),
                    raw=s,
                )
                for s in d.get("shards") or []
            ],
            engine_args=dict(d.get("engine_args") or {}),
            explanation=list(d.get("explanation") or []),
            warnings=list(d.get("warnings") or []),
            budget=d.get("budget"),
            idle_devices=d.get("idle_devices"),
            load=d.get("load"),
            engine_env=d.get("engine_env"),
            raw=d,
        )


def plan(request=None, **kwargs) -> Plan:
    """hwaccel_plan_sharding as a Plan."""
    return Plan.from_dict(plan_sharding(request, **kwargs))
