# Time each NVML call internal/detect/nvidia/nvml makes, through pynvml (the CUDA image has nvidia-ml-py),
# on device 0: 50 calls each, median and min ms, into $OUT/nvmlcalls.json. Run on the GPU machine:
#   run(command="python3 scripts/device/nvml-calls.py", timeout_s=60)
import json, time, statistics, os, sys
import pynvml as n
out = {}
t=time.perf_counter(); n.nvmlInit(); out['init_ms']=(time.perf_counter()-t)*1e3
h = n.nvmlDeviceGetHandleByIndex(0)
C = {
 'GetCount': lambda: n.nvmlDeviceGetCount(),
 'GetHandleByIndex': lambda: n.nvmlDeviceGetHandleByIndex(0),
 'DriverVersion': lambda: n.nvmlSystemGetDriverVersion(),
 'NVMLVersion': lambda: n.nvmlSystemGetNVMLVersion(),
 'CudaDriverVersion': lambda: n.nvmlSystemGetCudaDriverVersion_v2(),
 'Name': lambda: n.nvmlDeviceGetName(h),
 'UUID': lambda: n.nvmlDeviceGetUUID(h),
 'MemoryInfo': lambda: n.nvmlDeviceGetMemoryInfo(h),
 'MemoryInfo_v2': lambda: n.nvmlDeviceGetMemoryInfo(h, version=n.nvmlMemory_v2),
 'PciInfo': lambda: n.nvmlDeviceGetPciInfo_v3(h),
 'CudaComputeCapability': lambda: n.nvmlDeviceGetCudaComputeCapability(h),
 'NumaNodeId': lambda: n.nvmlDeviceGetNumaNodeId(h),
 'MigMode': lambda: n.nvmlDeviceGetMigMode(h),
 'MaxMigDeviceCount': lambda: n.nvmlDeviceGetMaxMigDeviceCount(h),
 'UtilizationRates': lambda: n.nvmlDeviceGetUtilizationRates(h),
 'Temperature': lambda: n.nvmlDeviceGetTemperature(h, 0),
 'PowerUsage': lambda: n.nvmlDeviceGetPowerUsage(h),
 'PowerManagementLimit': lambda: n.nvmlDeviceGetPowerManagementLimit(h),
 'EnforcedPowerLimit': lambda: n.nvmlDeviceGetEnforcedPowerLimit(h),
 'PersistenceMode': lambda: n.nvmlDeviceGetPersistenceMode(h),
 'EccMode': lambda: n.nvmlDeviceGetEccMode(h),
 'TotalEccErrors': lambda: n.nvmlDeviceGetTotalEccErrors(h, 1, 1),
 'RemappedRows': lambda: n.nvmlDeviceGetRemappedRows(h),
 'MaxClockInfo': lambda: n.nvmlDeviceGetMaxClockInfo(h, 1),
 'ClocksEventReasons': lambda: n.nvmlDeviceGetCurrentClocksEventReasons(h),
 'CurrPcieLinkGeneration': lambda: n.nvmlDeviceGetCurrPcieLinkGeneration(h),
 'CurrPcieLinkWidth': lambda: n.nvmlDeviceGetCurrPcieLinkWidth(h),
 'MaxPcieLinkGeneration': lambda: n.nvmlDeviceGetMaxPcieLinkGeneration(h),
 'MaxPcieLinkWidth': lambda: n.nvmlDeviceGetMaxPcieLinkWidth(h),
 'MemoryBusWidth': lambda: n.nvmlDeviceGetMemoryBusWidth(h),
 'ComputeRunningProcesses': lambda: n.nvmlDeviceGetComputeRunningProcesses(h),
 'NvLinkState0': lambda: n.nvmlDeviceGetNvLinkState(h, 0),
 'NvLinkVersion0': lambda: n.nvmlDeviceGetNvLinkVersion(h, 0),
 'NvLinkRemotePciInfo0': lambda: n.nvmlDeviceGetNvLinkRemotePciInfo(h, 0),
 'TopologyCommonAncestorSelf': lambda: n.nvmlDeviceGetTopologyCommonAncestor(h, h),
 'FieldValues1': lambda: n.nvmlDeviceGetFieldValues(h, [n.NVML_FI_DEV_NVLINK_LINK_COUNT]),
}
res = {}
for k, f in C.items():
    ts=[]; err=None
    for i in range(50):
        t=time.perf_counter()
        try: f()
        except Exception as e: err=str(e)
        ts.append((time.perf_counter()-t)*1e3)
    res[k]={'median_ms':statistics.median(ts),'min_ms':min(ts),'err':err}
out['calls']=res
json.dump(out, open(os.environ.get('OUT','.')+'/nvmlcalls.json','w'), indent=1)
for k,v in sorted(res.items(), key=lambda kv:-kv[1]['median_ms']): print(f"{v['median_ms']:8.3f} {k} {v['err'] or ''}")
