package builtin

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuflow/gpuflow/plugins/api"
)

var update = flag.Bool("update", false, "rewrite the generated docs")

const languageDoc = "../../docs/language.md"

// TestDocsStageTables keeps the argument table of each built-in stage type
// in docs/language.md in step with the schema and contract its plugin
// declares: the table between <!-- stage-args:TYPE:begin --> and
// <!-- stage-args:TYPE:end --> is generated, never edited by hand.
func TestDocsStageTables(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(languageDoc)
	if err != nil {
		t.Fatal(err)
	}
	got := doc
	for stageType, table := range stageTables(t) {
		got = replaceBetween(t, got, stageType, table)
	}
	if *update {
		if err := os.WriteFile(languageDoc, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(string(got), string(doc)); diff != "" {
		t.Errorf("%s is stale; run go test ./plugins/builtin -run TestDocsStageTables -update (-want +got):\n%s", languageDoc, diff)
	}
}

// replaceBetween puts table between the stage type's markers in doc.
func replaceBetween(t *testing.T, doc []byte, stageType, table string) []byte {
	t.Helper()
	begin := []byte("<!-- stage-args:" + stageType + ":begin -->\n")
	end := []byte("<!-- stage-args:" + stageType + ":end -->")
	i, j := bytes.Index(doc, begin), bytes.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q and %q", languageDoc, begin, end)
	}
	i += len(begin)
	return slices.Concat(doc[:i], []byte(table), doc[j:])
}

// stageTables renders every built-in stage type's table, by type.
func stageTables(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range Names() {
		p, _ := New(name)
		schema, err := p.Schema(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for stageType, body := range schema.StageTypes {
			out[stageType] = stageTable(body, schema.Contracts[stageType])
		}
	}
	return out
}

// stageTable lists the meta-arguments the type takes, then its attributes
// and nested blocks by name.
func stageTable(body *api.BlockSchema, contract *api.StageContract) string {
	var b strings.Builder
	b.WriteString("| argument | type | required | meaning |\n|---|---|---|---|\n")
	if contract != nil {
		for _, m := range contract.MetaArguments {
			fmt.Fprintf(&b, "| `%s` | meta-argument | %s | see [Meta-arguments](#meta-arguments) |\n", m.Name, yesNo(m.Required))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(body.Attributes)) {
		a := body.Attributes[name]
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", name, typeName(a.Type), yesNo(a.Required), cell(a.Description))
	}
	for _, name := range slices.Sorted(maps.Keys(body.Blocks)) {
		nb := body.Blocks[name]
		fmt.Fprintf(&b, "| `%s` block | %s | %s | %s |\n", name, nesting(nb), yesNo(nb.MinItems > 0), blockCell(&nb.Block))
	}
	return b.String()
}

// blockCell is a nested block's description followed by its arguments.
func blockCell(block *api.BlockSchema) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(block.Attributes)) {
		a := block.Attributes[name]
		part := fmt.Sprintf("`%s` (%s", name, typeName(a.Type))
		if a.Required {
			part += ", required"
		}
		part += ")"
		if a.Description != "" {
			part += ": " + strings.TrimSuffix(a.Description, ".")
		}
		parts = append(parts, part)
	}
	for _, name := range slices.Sorted(maps.Keys(block.Blocks)) {
		parts = append(parts, fmt.Sprintf("`%s` block", name))
	}
	text := strings.TrimSuffix(block.Description, ".")
	if len(parts) > 0 {
		if text != "" {
			text += ". "
		}
		text += "Arguments: " + strings.Join(parts, "; ")
	}
	return cell(text)
}

func typeName(ty cty.Type) string {
	if ty == cty.DynamicPseudoType {
		return "any"
	}
	return ty.FriendlyName()
}

func nesting(nb *api.NestedBlock) string {
	if nb.Nesting == api.NestingList {
		return "blocks"
	}
	return "one block"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// cell escapes what would end a table cell.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
