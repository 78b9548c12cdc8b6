package node

// Health is one GPU's state as NVML reports it. A field NVML cannot read
// on this GPU is left at its zero value and named in Unsupported.
type Health struct {
	GPU         int    `json:"gpu"`
	Name        string `json:"name"`
	UUID        string `json:"uuid"`
	BusID       string `json:"bus_id"`
	MemoryBytes int64  `json:"memory_bytes"`

	ECCEnabled bool `json:"ecc_enabled"`
	// ECCPendingChange is true when a different ECC mode waits for a reset.
	ECCPendingChange bool `json:"ecc_pending_change"`
	// UncorrectableECC counts uncorrectable errors since the driver loaded
	// (volatile) and over the GPU's life (aggregate).
	UncorrectableECCVolatile  uint64 `json:"uncorrectable_ecc_volatile"`
	UncorrectableECCAggregate uint64 `json:"uncorrectable_ecc_aggregate"`
	// Row remapping (Ampere and later) or page retirement (before).
	RemappedRowsCorrectable   uint64 `json:"remapped_rows_correctable"`
	RemappedRowsUncorrectable uint64 `json:"remapped_rows_uncorrectable"`
	RemapPending              bool   `json:"remap_pending"`
	RemapFailed               bool   `json:"remap_failed"`
	RetiredPages              uint64 `json:"retired_pages"`

	NVLinksSupported int `json:"nvlinks_supported"`
	NVLinksActive    int `json:"nvlinks_active"`

	PCIeGen      int `json:"pcie_gen"`
	PCIeGenMax   int `json:"pcie_gen_max"`
	PCIeWidth    int `json:"pcie_width"`
	PCIeWidthMax int `json:"pcie_width_max"`

	TemperatureC float64  `json:"temperature_c"`
	PowerW       float64  `json:"power_w"`
	PowerLimitW  float64  `json:"power_limit_w"`
	ClockEvents  uint64   `json:"clock_event_reasons"`
	NUMANode     int      `json:"numa_node"`
	LocalCPUs    string   `json:"local_cpus"`
	Unsupported  []string `json:"unsupported,omitempty"`
}

// Clock event (throttle) reason bits, as NVML defines them.
const (
	ClockIdle          uint64 = 0x1
	ClockAppSetting    uint64 = 0x2
	ClockSWPowerCap    uint64 = 0x4
	ClockHWSlowdown    uint64 = 0x8
	ClockSyncBoost     uint64 = 0x10
	ClockSWThermal     uint64 = 0x20
	ClockHWThermal     uint64 = 0x40
	ClockHWPowerBrake  uint64 = 0x80
	ClockDisplayClocks uint64 = 0x100
)

// HarmfulClockEvents are the reasons that mean the GPU is held below its
// clocks by heat or by the board's power hardware, not by its own policy.
const HarmfulClockEvents = ClockHWSlowdown | ClockSWThermal | ClockHWThermal | ClockHWPowerBrake

var clockEventNames = []struct {
	bit  uint64
	name string
}{
	{ClockIdle, "idle"},
	{ClockAppSetting, "applications_clocks_setting"},
	{ClockSWPowerCap, "sw_power_cap"},
	{ClockHWSlowdown, "hw_slowdown"},
	{ClockSyncBoost, "sync_boost"},
	{ClockSWThermal, "sw_thermal_slowdown"},
	{ClockHWThermal, "hw_thermal_slowdown"},
	{ClockHWPowerBrake, "hw_power_brake_slowdown"},
	{ClockDisplayClocks, "display_clock_setting"},
}

// ClockEventNames names the set bits of reasons, in NVML's order.
func ClockEventNames(reasons uint64) []string {
	var names []string
	for _, c := range clockEventNames {
		if reasons&c.bit != 0 {
			names = append(names, c.name)
		}
	}
	return names
}
