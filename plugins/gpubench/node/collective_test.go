package node

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBusFactor(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		op   Op
		n    int
		want float64
	}{
		"all_reduce 8 ranks":     {AllReduce, 8, 1.75},
		"all_reduce 4 ranks":     {AllReduce, 4, 1.5},
		"all_reduce 1 rank":      {AllReduce, 1, 0},
		"all_gather 4 ranks":     {AllGather, 4, 0.75},
		"reduce_scatter 2 ranks": {ReduceScatter, 2, 0.5},
		"alltoall 8 ranks":       {Alltoall, 8, 0.875},
		"broadcast 4 ranks":      {Broadcast, 4, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := tc.op.BusFactor(tc.n); got != tc.want {
				t.Errorf("BusFactor(%d) = %v, want %v", tc.n, got, tc.want)
			}
		})
	}
}

func TestLayout(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	tests := map[string]struct {
		op       Op
		bytes    int64
		elem, n  int
		want     Layout
		wantFail bool
	}{
		"all_reduce bf16 1 MiB": {
			op: AllReduce, bytes: mib, elem: 2, n: 4,
			want: Layout{Bytes: mib, SendElems: mib / 2, RecvElems: mib / 2, Count: mib / 2},
		},
		"all_gather counts the gathered buffer": {
			op: AllGather, bytes: mib, elem: 2, n: 4,
			want: Layout{Bytes: mib, SendElems: mib / 8, RecvElems: mib / 2, Count: mib / 8},
		},
		"reduce_scatter counts the scattered buffer": {
			op: ReduceScatter, bytes: mib, elem: 4, n: 8,
			want: Layout{Bytes: mib, SendElems: mib / 4, RecvElems: mib / 32, Count: mib / 32},
		},
		"alltoall per-peer count": {
			op: Alltoall, bytes: mib, elem: 2, n: 4,
			want: Layout{Bytes: mib, SendElems: mib / 2, RecvElems: mib / 2, Count: mib / 8},
		},
		"rounds down to whole chunks": {
			op: AllGather, bytes: 1000, elem: 2, n: 3,
			want: Layout{Bytes: 996, SendElems: 166, RecvElems: 498, Count: 166},
		},
		"broadcast odd bytes": {
			op: Broadcast, bytes: 7, elem: 2, n: 2,
			want: Layout{Bytes: 6, SendElems: 3, RecvElems: 3, Count: 3},
		},
		"too small for one element a rank": {
			op: Alltoall, bytes: 6, elem: 2, n: 4, wantFail: true,
		},
		"unknown op": {op: "reduce", bytes: mib, elem: 2, n: 2, wantFail: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.op.Layout(tc.bytes, tc.elem, tc.n)
			if (err != nil) != tc.wantFail {
				t.Fatalf("err = %v, wantFail %v", err, tc.wantFail)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Layout (-want +got):\n%s", diff)
			}
		})
	}
}

// 4 ranks moving 256 MiB in 1 ms, worked by hand from nccl-tests' formulas.
func TestBandwidth(t *testing.T) {
	t.Parallel()
	alg, bus := AllReduce.Bandwidth(256<<20, 1e-3, 4)
	if math.Abs(alg-268.435456e9) > 1 || math.Abs(bus-402.653184e9) > 1 {
		t.Errorf("algbw %v busbw %v, want 268.435456e9 and 402.653184e9", alg, bus)
	}
	if a, b := Broadcast.Bandwidth(1, 0, 4); a != 0 || b != 0 {
		t.Errorf("zero time gave %v %v, want 0 0", a, b)
	}
}

func TestClockEventNames(t *testing.T) {
	t.Parallel()
	got := ClockEventNames(ClockIdle | ClockHWThermal | 0x10000)
	if diff := cmp.Diff([]string{"idle", "hw_thermal_slowdown"}, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}
