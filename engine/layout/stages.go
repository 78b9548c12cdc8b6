package layout

import (
	"fmt"
	"strings"
)

// Uneven reports whether the layout places its own layer counts on the
// first or last pipeline stage.
func Uneven(l Layout) bool { return l.FirstStageLayers > 0 || l.LastStageLayers > 0 }

// StageLayers is the number of transformer layers on each pipeline stage
// (pipeline rank, all its virtual stages together): FirstStageLayers and
// LastStageLayers where set, the other stages splitting the rest evenly.
// ok is false when the rest does not split evenly, a stage would hold no
// layer, or a stage's count does not split over vp; checkStageLayers says
// which.
func StageLayers(l Layout, layers int) (counts []int, ok bool) {
	if l.PP < 1 {
		return nil, false
	}
	msg, _ := checkStageLayers(l, layers)
	ok = msg == "" && l.FirstStageLayers >= 0 && l.LastStageLayers >= 0 && !(Uneven(l) && l.PP == 1)
	return stageLayers(l, layers), ok
}

// StageLayersText lists the layers per pipeline stage, runs of equal
// stages folded: "7, 8 x 14, 7".
func StageLayersText(l Layout, layers int) string {
	counts, _ := StageLayers(l, layers)
	var parts []string
	for i := 0; i < len(counts); {
		j := i
		for j < len(counts) && counts[j] == counts[i] {
			j++
		}
		if j-i > 1 {
			parts = append(parts, fmt.Sprintf("%d x %d", counts[i], j-i))
		} else {
			parts = append(parts, fmt.Sprint(counts[i]))
		}
		i = j
	}
	return strings.Join(parts, ", ")
}

func stageLayers(l Layout, layers int) []int {
	counts := make([]int, l.PP)
	first, last, rest, others := split(l, layers)
	for i := range counts {
		if others > 0 {
			counts[i] = rest / others
		}
	}
	if first > 0 {
		counts[0] = first
	}
	if last > 0 { // split sets it only with more than one stage
		counts[l.PP-1] = last
	}
	return counts
}

// split is the set counts, the layers left and the stages left for them.
func split(l Layout, layers int) (first, last, rest, others int) {
	others = l.PP
	if l.FirstStageLayers > 0 {
		first = l.FirstStageLayers
		others--
	}
	if l.LastStageLayers > 0 && l.PP > 1 {
		last = l.LastStageLayers
		others--
	}
	return first, last, layers - first - last, others
}

// checkStageLayers is what is wrong with the layout's split of layers
// over its stages ("" when nothing), and the argument to change.
func checkStageLayers(l Layout, layers int) (msg, field string) {
	vp := VirtualStages(l)
	if Uneven(l) && l.PP == 1 {
		return "", "" // stage-layers-require-pp reports it
	}
	if !Uneven(l) {
		if stages := l.PP * vp; layers%stages != 0 {
			field = "pp"
			if vp > 1 && layers%l.PP == 0 {
				field = "vp"
			}
			return fmt.Sprintf("%d layers do not split evenly into pp*vp = %d*%d = %d model chunks; pick pp and vp whose product divides %d, or set first_stage_layers and last_stage_layers.",
				layers, l.PP, vp, stages, layers), field
		}
		return "", ""
	}
	first, last, rest, others := split(l, layers)
	field = setField(first)
	switch {
	case others == 0 && rest != 0:
		return fmt.Sprintf("first_stage_layers = %d and last_stage_layers = %d place %d of the model's %d layers on its pp = %d stages; make them add up to %d.",
			first, last, first+last, layers, l.PP, layers), field
	case others > 0 && rest < others:
		return fmt.Sprintf("%s leave%s %d of the model's %d layers for %s, fewer than one layer%s; set %s at most %d.",
			setCounts(first, last), plural(first > 0 && last > 0, "", "s"), max(rest, 0), layers, theOther(others), plural(others > 1, " each", ""), setNames(first, last), layers-others), field
	case others > 0 && rest%others != 0:
		return fmt.Sprintf("%d layers less %s leave %d for %s, which do not split evenly; choose counts that leave a multiple of %d.",
			layers, setCounts(first, last), rest, theOther(others), others), field
	}
	// The counts split the layers; each stage must split over vp too, the
	// user's own counts first.
	if first > 0 && first%vp != 0 {
		return fmt.Sprintf("first_stage_layers = %d does not split into vp = %d virtual stages; pick a multiple of %d, or set vp = 1.", first, vp, vp), "first_stage_layers"
	}
	if last > 0 && last%vp != 0 {
		return fmt.Sprintf("last_stage_layers = %d does not split into vp = %d virtual stages; pick a multiple of %d, or set vp = 1.", last, vp, vp), "last_stage_layers"
	}
	if others > 0 && (rest/others)%vp != 0 {
		return fmt.Sprintf("%s hold%s %d layers each, which do not split into vp = %d virtual stages; choose counts that leave a multiple of %d for them, or set vp = 1.",
			theOther(others), plural(others > 1, "", "s"), rest/others, vp, vp*others), "vp"
	}
	return "", ""
}

// setField is the count a split that misses is reported on: the first
// stage's where the layout sets it, else the last's.
func setField(first int) string {
	if first > 0 {
		return "first_stage_layers"
	}
	return "last_stage_layers"
}

// theOther names the stages without a count of their own.
func theOther(n int) string {
	if n == 1 {
		return "the other stage"
	}
	return fmt.Sprintf("the other %d stages", n)
}

func plural(many bool, yes, no string) string {
	if many {
		return yes
	}
	return no
}

// setNames names the counts the layout sets.
func setNames(first, last int) string {
	switch {
	case first > 0 && last > 0:
		return "their sum"
	case first > 0:
		return "first_stage_layers"
	}
	return "last_stage_layers"
}

func setCounts(first, last int) string {
	switch {
	case first > 0 && last > 0:
		return fmt.Sprintf("first_stage_layers = %d and last_stage_layers = %d", first, last)
	case first > 0:
		return fmt.Sprintf("first_stage_layers = %d", first)
	}
	return fmt.Sprintf("last_stage_layers = %d", last)
}
