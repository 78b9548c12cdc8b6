// Command glaive-sample writes a local JSONL sample shaped like
// glaive-function-calling-v2 as chat records, so that a data prep stage
// with format = "chat" can run without downloading it. Each record is the
// conversation Glaive's "system" and "chat" fields hold, as OpenAI-style
// messages: a system message offering a function (its JSON schema, as
// Glaive writes it), the user's request, the assistant's call in Glaive's
// "<functioncall> {...}" form, the function's response as a tool message,
// and the assistant's answer; some records hold a plain exchange instead.
// The content is seeded and synthetic.
//
//	go run ./scripts/glaive-sample -out workloads/data/raw/glaive-function-calling-v2 -records 2000
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type record struct {
	Messages []message `json:"messages"`
}

// function is one callable the system message offers, with a way to ask
// for it, call it and answer from its response.
type function struct {
	schema string
	ask    func(r *rand.Rand) (question, args, response, answer string)
}

var cities = []string{"Paris", "Zürich", "Osaka", "Lagos", "Lima", "Oslo", "Denver", "Hanoi"}

var functions = []function{
	{schema: `{"name": "get_weather", "description": "Get the current weather of a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city"}}, "required": ["city"]}}`,
		ask: func(r *rand.Rand) (string, string, string, string) {
			city, temp := cities[r.IntN(len(cities))], 5+r.IntN(30)
			return fmt.Sprintf("What's the weather like in %s right now?", city),
				fmt.Sprintf(`{"city": "%s"}`, city),
				fmt.Sprintf(`{"temperature_c": %d, "condition": "clear"}`, temp),
				fmt.Sprintf("It is currently %d °C and clear in %s.", temp, city)
		}},
	{schema: `{"name": "convert_currency", "description": "Convert an amount from one currency to another", "parameters": {"type": "object", "properties": {"amount": {"type": "number", "description": "The amount to convert"}, "from": {"type": "string", "description": "The currency to convert from"}, "to": {"type": "string", "description": "The currency to convert to"}}, "required": ["amount", "from", "to"]}}`,
		ask: func(r *rand.Rand) (string, string, string, string) {
			amount := 10 * (1 + r.IntN(100))
			rate := 0.8 + 0.4*r.Float64()
			return fmt.Sprintf("Hi, I need to convert %d US dollars to euros. Can you help me with that?", amount),
				fmt.Sprintf(`{"amount": %d, "from": "USD", "to": "EUR"}`, amount),
				fmt.Sprintf(`{"converted_amount": %.2f, "from": "USD", "to": "EUR"}`, float64(amount)*rate),
				fmt.Sprintf("Sure, %d US dollars is approximately %.2f euros.", amount, float64(amount)*rate)
		}},
	{schema: `{"name": "calculate_bmi", "description": "Calculate the Body Mass Index", "parameters": {"type": "object", "properties": {"weight": {"type": "number", "description": "The weight in kilograms"}, "height": {"type": "number", "description": "The height in meters"}}, "required": ["weight", "height"]}}`,
		ask: func(r *rand.Rand) (string, string, string, string) {
			w, h := 50+r.IntN(50), 1.5+0.01*float64(r.IntN(45))
			bmi := float64(w) / (h * h)
			return fmt.Sprintf("I weigh %d kilograms and I am %.2f meters tall. What is my BMI?", w, h),
				fmt.Sprintf(`{"weight": %d, "height": %.2f}`, w, h),
				fmt.Sprintf(`{"bmi": %.2f}`, bmi),
				fmt.Sprintf("Your Body Mass Index (BMI) is %.2f.", bmi)
		}},
}

var chats = [][2]string{
	{"Can you tell me a fun fact about octopuses?", "Octopuses have three hearts and blue blood."},
	{"Can you order a pizza for me?", "I'm sorry, but I can't place orders. My functions only let me help with the tasks they describe."},
	{"What does HTTP stand for?", "HTTP stands for Hypertext Transfer Protocol."},
}

const systemPrefix = "You are a helpful assistant with access to the following functions. Use them if required -\n"

func conversation(r *rand.Rand) record {
	f := functions[r.IntN(len(functions))]
	system := message{"system", systemPrefix + f.schema}
	if r.IntN(4) == 0 {
		c := chats[r.IntN(len(chats))]
		return record{[]message{system, {"user", c[0]}, {"assistant", c[1]}}}
	}
	question, args, response, answer := f.ask(r)
	var schema struct{ Name string }
	json.Unmarshal([]byte(f.schema), &schema)
	call := fmt.Sprintf(`<functioncall> {"name": "%s", "arguments": '%s'}`, schema.Name, args)
	return record{[]message{system, {"user", question}, {"assistant", call}, {"tool", response}, {"assistant", answer}}}
}

func main() {
	out := flag.String("out", "workloads/data/raw/glaive-function-calling-v2", "folder to write train.jsonl to")
	records := flag.Int("records", 2000, "number of records")
	seed := flag.Uint64("seed", 1, "seed of the content")
	flag.Parse()
	if err := write(*out, *records, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "glaive-sample:", err)
		os.Exit(1)
	}
}

// write writes the file whole under a temporary name, then renames it.
func write(out string, records int, seed uint64) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(seed, 16))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for range records {
		if err := enc.Encode(conversation(r)); err != nil {
			return err
		}
	}
	path := filepath.Join(out, "train.jsonl")
	tmp := path + ".partial"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}
