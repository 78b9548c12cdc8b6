package api

import "slices"

// Capabilities a plugin may list in Schema.Capabilities. A host ignores
// names it does not know, so new ones can be added without a new protocol
// version.
const (
	// CapabilityStop: Stop makes running ApplyStage calls end soon and still
	// return their result. Without it, a host that wants a stage to end
	// kills the plugin process instead.
	CapabilityStop = "stop"
	// CapabilityConcurrentApply: one plugin process can run several
	// ApplyStage calls at once. Without it, a host starts a process per
	// running stage.
	CapabilityConcurrentApply = "concurrent_apply"
)

// HasCapability reports whether the plugin declared the named capability.
func (s *Schema) HasCapability(name string) bool {
	return slices.Contains(s.Capabilities, name)
}
