package hardware

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// needed reports whether a must hold a value in p, given the kinds p has.
// A kind not set yet counts as a link or network, so that an inline
// declaration learns of everything it lacks at once.
func (a argument) needed(p *Profile) bool {
	switch a.need {
	case always:
		return true
	case whenLinked:
		return p.Interconnect.Kind != InterconnectNone
	case whenNetworked:
		return p.Network.Kind != NetworkNone
	}
	return false
}

// checkRequired reports each required argument that neither the body nor
// the profile it starts from sets; a missing block is reported once.
func checkRequired(p *Profile, present presence, decl declaration) hcl.Diagnostics {
	var diags hcl.Diagnostics
	reported := map[string]bool{}
	for _, a := range arguments {
		if present[a.path()] || !a.needed(p) {
			continue
		}
		if block := outermostMissingBlock(a.block, decl); block != "" {
			if !reported[block] {
				reported[block] = true
				diags = append(diags, missingBlock(block, decl))
			}
			continue
		}
		diags = append(diags, missingArgument(a, p, decl))
	}
	return diags
}

// outermostMissingBlock returns the outermost block on path that the body
// lacks, or "" when every block on it is there.
func outermostMissingBlock(path string, decl declaration) string {
	missing := ""
	for ; path != blockTop; path = parentPath(path) {
		if decl.blocks[path] == nil {
			missing = path
		}
	}
	return missing
}

func missingBlock(path string, decl declaration) *hcl.Diagnostic {
	name := baseName(path)
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Missing %s block", name),
		Detail: fmt.Sprintf("%s %s block is required when no profile is set. Declare it, or set profile to a built-in (see gpuflow hardware list) and override what differs.",
			article(name), name),
		Subject: decl.rangeOf(parentPath(path)),
	}
}

func missingArgument(a argument, p *Profile, decl declaration) *hcl.Diagnostic {
	why := "when no profile is set"
	switch a.need {
	case whenLinked:
		why = fmt.Sprintf("when interconnect kind is %q", p.Interconnect.Kind)
	case whenNetworked:
		why = fmt.Sprintf("when network kind is %q", p.Network.Kind)
	}
	hint := ""
	if a.block == blockGPU && a.name != "count" {
		hint = fmt.Sprintf(" Or name a GPU datasheet, which sets it: datasheet = one of %s.", quoteAll(DatasheetNames()))
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Missing required argument",
		Detail:   fmt.Sprintf("The argument %q is required %s.%s", a.path(), why, hint),
		Subject:  decl.rangeOf(a.block),
	}
}

// checkConsistent checks rules that span several arguments, on the merged
// profile, pointing at the argument most likely to be wrong.
func checkConsistent(p *Profile, decl declaration) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, check := range []func(*Profile, declaration) *hcl.Diagnostic{
		checkRated, checkNetworked, checkLoneGPU, checkDomainFits, checkDomainWithin,
	} {
		if d := check(p, decl); d != nil {
			diags = append(diags, d)
		}
	}
	return diags
}

func checkRated(p *Profile, decl declaration) *hcl.Diagnostic {
	if len(p.GPU.TFLOPS) > 0 {
		return nil
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "GPU has no TFLOP/s rating",
		Detail: fmt.Sprintf("Set a dense TFLOP/s figure for at least one of %s in gpu.tflops; time estimates divide by it.",
			quoteAll([]string{PrecisionBF16, PrecisionFP16, PrecisionFP8, PrecisionTF32})),
		Subject: decl.rangeOf(blockTFLOPS, blockGPU),
	}
}

func checkNetworked(p *Profile, decl declaration) *hcl.Diagnostic {
	if p.Nodes <= 1 || p.Network.Kind != NetworkNone {
		return nil
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Several nodes need a network",
		Detail: fmt.Sprintf("nodes is %d but network kind is %q. Use 1 node, or declare a network block with kind %s.",
			p.Nodes, NetworkNone, quoteAll(networkKinds[:3])),
		Subject: decl.rangeOf("nodes", "network.kind"),
	}
}

// checkLoneGPU: a GPU with no scale-up link is a domain of one.
func checkLoneGPU(p *Profile, decl declaration) *hcl.Diagnostic {
	if p.Interconnect.Kind != InterconnectNone || p.Interconnect.DomainSize == 1 {
		return nil
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid value for interconnect.domain_size",
		Detail: fmt.Sprintf("interconnect.domain_size must be 1 when interconnect kind is %q; got %d.",
			InterconnectNone, p.Interconnect.DomainSize),
		Subject: decl.rangeOf("interconnect.domain_size", "interconnect.kind"),
	}
}

// checkDomainFits: a domain is either a part of a node (domains tile it) or
// a whole number of nodes (an NVL72 rack spans 18 nodes of 4 GPUs).
func checkDomainFits(p *Profile, decl declaration) *hcl.Diagnostic {
	domain, perNode := p.Interconnect.DomainSize, p.GPU.PerNode
	if perNode%domain == 0 || domain%perNode == 0 {
		return nil
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "NVLink domain does not fit the nodes",
		Detail: fmt.Sprintf("interconnect.domain_size (%d) must divide gpu.count (%d), or be a whole multiple of it for a domain that spans several nodes.",
			domain, perNode),
		Subject: decl.rangeOf("interconnect.domain_size", "gpu.count", blockInterconnect),
	}
}

// checkDomainWithin catches a domain left larger than the machine, as when
// an override lowers gpu.count or nodes below a profile's domain.
func checkDomainWithin(p *Profile, decl declaration) *hcl.Diagnostic {
	if p.Interconnect.DomainSize <= p.TotalGPUs() {
		return nil
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "NVLink domain larger than the hardware",
		Detail: fmt.Sprintf("interconnect.domain_size is %d but %d node(s) of %d GPUs hold only %d; set domain_size to at most %d.",
			p.Interconnect.DomainSize, p.Nodes, p.GPU.PerNode, p.TotalGPUs(), p.TotalGPUs()),
		Subject: decl.rangeOf("interconnect.domain_size", "gpu.count", "nodes", blockInterconnect),
	}
}

// article is "An" before a vowel sound ("An interconnect block"), else "A".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "An"
	}
	return "A"
}
