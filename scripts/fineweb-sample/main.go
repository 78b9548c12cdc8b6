// Command fineweb-sample writes a local Parquet sample shaped like
// FineWeb-Edu (the columns of its sample-10BT files: text, id, dump, url,
// file_path, language, language_score, token_count, score, int_score), so
// that a data prep stage reading FineWeb-Edu can run without downloading it.
// The text is seeded synthetic English prose, paragraphs of sentences drawn
// from a fixed vocabulary; rows are written in row groups as the real files
// are.
//
//	go run ./scripts/fineweb-sample -out workloads/data/raw/fineweb-edu -files 2 -rows 5000
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// row is one FineWeb-Edu record.
type row struct {
	Text          string  `parquet:"text"`
	ID            string  `parquet:"id"`
	Dump          string  `parquet:"dump"`
	URL           string  `parquet:"url"`
	FilePath      string  `parquet:"file_path"`
	Language      string  `parquet:"language"`
	LanguageScore float64 `parquet:"language_score"`
	TokenCount    int64   `parquet:"token_count"`
	Score         float64 `parquet:"score"`
	IntScore      int64   `parquet:"int_score"`
}

var (
	subjects = strings.Fields("the student the teacher photosynthesis the cell a river the economy gravity the committee the algorithm a volcano the treaty the enzyme a triangle the orchestra the reef")
	verbs    = strings.Fields("explains describes changes measures supports reduces produces follows requires shows")
	objects  = strings.Fields("energy the results a hypothesis the climate its structure the equation a pattern the evidence the population two variables the map")
	tails    = []string{"in the laboratory", "over many years", "according to the survey", "during the nineteenth century",
		"as the diagram shows", "at 37 degrees Celsius", "in 1848", "with 95% confidence", "(see Table 2)", "for example"}
)

func sentence(r *rand.Rand) string {
	s := fmt.Sprintf("%s %s %s %s.", subjects[r.IntN(len(subjects))], verbs[r.IntN(len(verbs))],
		objects[r.IntN(len(objects))], tails[r.IntN(len(tails))])
	return strings.ToUpper(s[:1]) + s[1:]
}

func document(r *rand.Rand) string {
	var paras []string
	for range 1 + r.IntN(6) {
		var b []string
		for range 2 + r.IntN(8) {
			b = append(b, sentence(r))
		}
		paras = append(paras, strings.Join(b, " "))
	}
	return strings.Join(paras, "\n\n")
}

func main() {
	out := flag.String("out", "workloads/data/raw/fineweb-edu", "folder to write train-NNNNN.parquet files to")
	files := flag.Int("files", 2, "number of files")
	rows := flag.Int("rows", 5000, "rows per file")
	perGroup := flag.Int("row-group", 1000, "rows per row group")
	seed := flag.Uint64("seed", 1, "seed of the text")
	flag.Parse()
	if err := write(*out, *files, *rows, *perGroup, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "fineweb-sample:", err)
		os.Exit(1)
	}
}

func write(out string, files, rows, perGroup int, seed uint64) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(seed, 18))
	for f := range files {
		path := filepath.Join(out, fmt.Sprintf("train-%05d-of-%05d.parquet", f, files))
		if err := writeFile(path, r, f, rows, perGroup); err != nil {
			return err
		}
		fmt.Println(path)
	}
	return nil
}

// writeFile writes the file whole under a temporary name, then renames it.
func writeFile(path string, r *rand.Rand, file, rows, perGroup int) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fineweb-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := parquet.NewGenericWriter[row](tmp, parquet.Compression(&zstd.Codec{}))
	batch := make([]row, 0, perGroup)
	for k := range rows {
		text := document(r)
		score := 2.5 + 2.5*r.Float64()
		batch = append(batch, row{
			Text: text, ID: fmt.Sprintf("<urn:uuid:%08x-%04x>", file, k), Dump: "CC-MAIN-2024-10",
			URL: fmt.Sprintf("https://example.org/%d/%d", file, k), FilePath: "s3://commoncrawl/crawl-data/CC-MAIN-2024-10/sample.warc.gz",
			Language: "en", LanguageScore: 0.9 + 0.1*r.Float64(), TokenCount: int64(len(strings.Fields(text))),
			Score: score, IntScore: int64(score + 0.5),
		})
		if len(batch) == perGroup || k == rows-1 {
			if _, err := w.Write(batch); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
