package shard

import (
	"encoding/binary"
	"fmt"
)

// DType is the element type of stored tokens.
type DType int

// The token types shards use.
const (
	Uint16 DType = iota + 1
	Int32
	Uint32
	// Uint8 holds loss masks: one byte per token, 1 where the loss is
	// computed.
	Uint8
)

// Size is the width of one token in bytes.
func (d DType) Size() int {
	switch d {
	case Uint8:
		return 1
	case Uint16:
		return 2
	}
	return 4
}

func (d DType) String() string {
	switch d {
	case Uint16:
		return "uint16"
	case Int32:
		return "int32"
	case Uint32:
		return "uint32"
	case Uint8:
		return "uint8"
	}
	return fmt.Sprintf("DType(%d)", int(d))
}

// MegatronDType is the type Megatron-LM's preprocess_data picks for a
// vocabulary (DType.optimal_dtype): uint16 below 65500 ids, int32 above.
func MegatronDType(vocabSize int) DType {
	if vocabSize < 65500 {
		return Uint16
	}
	return Int32
}

// NpyDType is the narrowest unsigned type that holds every id of a
// vocabulary, as the reference FineWeb preparation stores uint16.
func NpyDType(vocabSize int) DType {
	if vocabSize <= 1<<16 {
		return Uint16
	}
	return Uint32
}

// appendTokens appends tokens little-endian as d, checking each fits.
func appendTokens(buf []byte, d DType, tokens []uint32) ([]byte, error) {
	for _, t := range tokens {
		switch {
		case d == Uint8 && t > 0xFF, d == Uint16 && t > 0xFFFF, d == Int32 && t > 0x7FFFFFFF:
			return nil, fmt.Errorf("token %d does not fit %v", t, d)
		case d == Uint8:
			buf = append(buf, byte(t))
		case d == Uint16:
			buf = binary.LittleEndian.AppendUint16(buf, uint16(t))
		default:
			buf = binary.LittleEndian.AppendUint32(buf, t)
		}
	}
	return buf, nil
}

// decodeTokens reads little-endian tokens of type d.
func decodeTokens(data []byte, d DType) []uint32 {
	n := len(data) / d.Size()
	out := make([]uint32, n)
	for k := range out {
		switch d {
		case Uint8:
			out[k] = uint32(data[k])
		case Uint16:
			out[k] = uint32(binary.LittleEndian.Uint16(data[2*k:]))
		default:
			out[k] = binary.LittleEndian.Uint32(data[4*k:])
		}
	}
	return out
}
