package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Roles a message may have.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Conversation is one record: its messages and the tools offered, each as
// the JSON objects the template sees.
type Conversation struct {
	Messages []map[string]any
	Tools    []any
}

// shareGPTRoles maps ShareGPT "from" values to roles.
var shareGPTRoles = map[string]string{
	"system": RoleSystem, "human": RoleUser, "user": RoleUser,
	"gpt": RoleAssistant, "assistant": RoleAssistant,
	"tool": RoleTool, "function_response": RoleTool, "observation": RoleTool,
}

// Parse reads a record. Errors say which message is wrong and why.
func Parse(data []byte) (*Conversation, error) {
	order := keyOrder{}
	v, err := decodeOrdered(data, order)
	if err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	c := &Conversation{}
	if tools, ok := obj["tools"]; ok && tools != nil {
		list, ok := tools.([]any)
		if !ok {
			return nil, errors.New(`"tools" is not a list`)
		}
		c.Tools = list
	}
	switch {
	case obj["messages"] != nil:
		c.Messages, err = openAIMessages(obj["messages"])
	case obj["conversations"] != nil:
		c.Messages, err = shareGPTMessages(obj["conversations"], order)
	default:
		return nil, errors.New(`no "messages" or "conversations" list`)
	}
	if err != nil {
		return nil, err
	}
	remember(c, order)
	return c, nil
}

func messageList(v any, field string) ([]any, error) {
	list, ok := v.([]any)
	switch {
	case !ok:
		return nil, fmt.Errorf("%q is not a list", field)
	case len(list) == 0:
		return nil, fmt.Errorf("%q is empty", field)
	}
	return list, nil
}

func openAIMessages(v any) ([]map[string]any, error) {
	list, err := messageList(v, "messages")
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(list))
	for i, m := range list {
		msg, ok := m.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("messages[%d] is not an object", i)
		}
		role, ok := msg["role"].(string)
		if !ok {
			return nil, fmt.Errorf(`messages[%d] has no "role" string`, i)
		}
		if err := checkRole(role); err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		out[i] = msg
	}
	return out, nil
}

func shareGPTMessages(v any, order keyOrder) ([]map[string]any, error) {
	list, err := messageList(v, "conversations")
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(list))
	for i, m := range list {
		turn, ok := m.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("conversations[%d] is not an object", i)
		}
		from, ok := turn["from"].(string)
		if !ok {
			return nil, fmt.Errorf(`conversations[%d] has no "from" string`, i)
		}
		role, ok := shareGPTRoles[from]
		if !ok {
			return nil, fmt.Errorf("conversations[%d]: unknown speaker %q; want human, gpt, system or tool", i, from)
		}
		value, ok := turn["value"].(string)
		if !ok {
			return nil, fmt.Errorf(`conversations[%d] has no "value" string`, i)
		}
		msg := map[string]any{"role": role, "content": value}
		order.set(msg, []string{"role", "content"})
		out[i] = msg
	}
	return out, nil
}

func checkRole(role string) error {
	switch role {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return nil
	}
	return fmt.Errorf("unknown role %q; want system, user, assistant or tool", role)
}

// decodeOrdered decodes JSON like encoding/json with UseNumber, recording
// the key order of every object in order.
func decodeOrdered(data []byte, order keyOrder) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, order)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("data after the object")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, order keyOrder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec, order)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
		obj := map[string]any{}
		var keys []string
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec, order)
			if err != nil {
				return nil, err
			}
			key := k.(string)
			if _, dup := obj[key]; !dup {
				keys = append(keys, key)
			}
			obj[key] = v
		}
		order.set(obj, keys)
		_, err := dec.Token()
		return obj, err
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return int(i), nil
		}
		return t.Float64()
	default:
		return t, nil
	}
}
