package catalogue

// GPUField names a GPU figure vtop reads from dcgm-exporter, after the alias
// table below has resolved the DCGM 3 and DCGM 4 spellings.
type GPUField uint8

// The GPU fields vtop reads, with the unit dcgm-exporter reports them in.
const (
	GPUUtil                      GPUField = iota // DCGM_FI_DEV_GPU_UTIL, percent
	GPUEngineActive                              // DCGM_FI_PROF_GR_ENGINE_ACTIVE, ratio 0–1 (profiling; MIG instances have only this)
	GPUMemUsed                                   // DCGM_FI_DEV_FB_USED, MiB
	GPUMemFree                                   // DCGM_FI_DEV_FB_FREE, MiB
	GPUMemReserved                               // DCGM_FI_DEV_FB_RESERVED, MiB (newer exporters; part of the total)
	GPUPower                                     // DCGM_FI_DEV_POWER_USAGE, W
	GPUPowerLimit                                // DCGM_FI_DEV_POWER_MGMT_LIMIT, W (not a default counter)
	GPUTemp                                      // DCGM_FI_DEV_GPU_TEMP, °C
	GPUSlowdownTemp                              // DCGM_FI_DEV_SLOWDOWN_TEMP, °C (not a default counter)
	GPUSMClock                                   // DCGM_FI_DEV_SM_CLOCK, MHz
	GPUMaxSMClock                                // DCGM_FI_DEV_MAX_SM_CLOCK, MHz (not a default counter)
	GPUXID                                       // DCGM_FI_DEV_XID_ERRORS, the last XID (0: none)
	GPUUncorrectableRemappedRows                 // DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS, count
	GPURowRemapFailure                           // DCGM_FI_DEV_ROW_REMAP_FAILURE, 0 or 1
	GPUClockEventReasons                         // DCGM_FI_DEV_CLOCK_THROTTLE_REASONS, NVML bit mask
	NumGPUFields                                 // the number of fields; not a metric
)

// DCGMRead is one row of the DCGM alias table: a family dcgm-exporter
// exposes and the figure it feeds.
type DCGMRead struct {
	// Name is the family as exposed.
	Name string
	// Field is the figure fed.
	Field GPUField
	// DCGM4 marks the spelling of DCGM 4, which renamed some fields and
	// keeps the old names as aliases (go-dcgm alias_resolution_test.go).
	// Either may appear; a page carrying both holds the same value twice.
	DCGM4 bool
}

// DCGMReads is the alias table of dcgm-exporter families vtop reads.
// Defaults from dcgm-exporter's etc/default-counters.csv; the rest are read
// when an operator has enabled them.
var DCGMReads = []DCGMRead{
	{Name: "DCGM_FI_DEV_GPU_UTIL", Field: GPUUtil},
	{Name: "DCGM_FI_PROF_GR_ENGINE_ACTIVE", Field: GPUEngineActive},
	{Name: "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", Field: GPUEngineActive, DCGM4: true},
	{Name: "DCGM_FI_DEV_FB_USED", Field: GPUMemUsed},
	{Name: "DCGM_FI_DEV_FB_FREE", Field: GPUMemFree},
	{Name: "DCGM_FI_DEV_FB_RESERVED", Field: GPUMemReserved},
	{Name: "DCGM_FI_DEV_POWER_USAGE", Field: GPUPower},
	{Name: "DCGM_FI_DEV_BOARD_POWER_WATTS", Field: GPUPower, DCGM4: true},
	{Name: "DCGM_FI_DEV_POWER_MGMT_LIMIT", Field: GPUPowerLimit},
	{Name: "DCGM_FI_DEV_GPU_TEMP", Field: GPUTemp},
	{Name: "DCGM_FI_DEV_GPU_TEMP_CELSIUS", Field: GPUTemp, DCGM4: true},
	{Name: "DCGM_FI_DEV_SLOWDOWN_TEMP", Field: GPUSlowdownTemp},
	{Name: "DCGM_FI_DEV_SM_CLOCK", Field: GPUSMClock},
	{Name: "DCGM_FI_DEV_MAX_SM_CLOCK", Field: GPUMaxSMClock},
	{Name: "DCGM_FI_DEV_XID_ERRORS", Field: GPUXID},
	{Name: "DCGM_FI_DEV_XID_ERROR", Field: GPUXID, DCGM4: true},
	{Name: "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", Field: GPUUncorrectableRemappedRows},
	{Name: "DCGM_FI_DEV_ROW_REMAP_FAILURE", Field: GPURowRemapFailure},
	{Name: "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", Field: GPUClockEventReasons},
	{Name: "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", Field: GPUClockEventReasons, DCGM4: true},
}

// FindDCGMRead returns the row of DCGMReads for a family name.
func FindDCGMRead(name string) (DCGMRead, bool) {
	for _, r := range DCGMReads {
		if r.Name == name {
			return r, true
		}
	}
	return DCGMRead{}, false
}

// Labels of dcgm-exporter series.
const (
	DCGMLabelGPU        = "gpu"           // the GPU index
	DCGMLabelUUID       = "UUID"          // GPU-…; a MIG instance carries its parent's
	DCGMLabelDevice     = "device"        // nvidiaN
	DCGMLabelModel      = "modelName"     // "NVIDIA H100 80GB HBM3"
	DCGMLabelHostname   = "Hostname"      // the node (older exporters)
	DCGMLabelHostnameLC = "hostname"      // the same, as newer exporters spell it
	DCGMLabelMIGProfile = "GPU_I_PROFILE" // "1g.6gb" on a MIG instance
	DCGMLabelMIGID      = "GPU_I_ID"      // the GPU instance id on its GPU
	// The workload's pod, as the exporter writes it on its own page (with
	// DCGM_EXPORTER_KUBERNETES=true).
	DCGMLabelPod       = "pod"
	DCGMLabelNamespace = "namespace"
	DCGMLabelContainer = "container"
	// The same, as Prometheus stores them: its own target labels (the
	// exporter's pod) take pod and namespace, and the page's are renamed.
	DCGMLabelExportedPod       = "exported_pod"
	DCGMLabelExportedNamespace = "exported_namespace"
	DCGMLabelExportedContainer = "exported_container"
)

// DCGMPort is dcgm-exporter's default port; its path is /metrics.
const DCGMPort = 9400

// ClockEventReasons are NVML's clock event (throttle) reason bits, shared by
// nvidia-smi's clocks_event_reasons.active and DCGM's
// CLOCK_THROTTLE_REASONS / CLOCKS_EVENT_REASONS.
const (
	ClockEventGPUIdle          = 0x1
	ClockEventAppClocksSetting = 0x2
	ClockEventSWPowerCap       = 0x4
	ClockEventHWSlowdown       = 0x8
	ClockEventSyncBoost        = 0x10
	ClockEventSWThermal        = 0x20
	ClockEventHWThermal        = 0x40
	ClockEventHWPowerBrake     = 0x80
	ClockEventDisplayClock     = 0x100
)
