package report

// dataPrep tabulates what data prep read and wrote, per split, and its speed.
func (in stageInput) dataPrep(sec *Section) {
	t := in.outputsTable("Data", "documents", "tokens", "skipped", "bytes")
	if d, ok := in.stage.Metrics["duration"]; ok && d.Last > 0 {
		var tokens float64
		if output(in.stage, "tokens", &tokens) {
			t.Rows = append(t.Rows, []string{"duration (s)", num(d.Last)}, []string{"tokens/s", num(tokens / d.Last)})
		}
	}
	sec.Tables = append(sec.Tables, t)
	splits := Table{Title: "Splits", Header: []string{"split", "documents", "tokens", "bytes"}}
	for _, name := range []string{"train", "valid", "test"} {
		var s struct{ Documents, Tokens, Bytes float64 }
		if output(in.stage, name, &s) {
			splits.Rows = append(splits.Rows, []string{name, num(s.Documents), num(s.Tokens), num(s.Bytes)})
		}
	}
	if len(splits.Rows) > 0 {
		sec.Tables = append(sec.Tables, splits)
	}
}
