package bpe

// symbol is one token of a piece being merged by mergeHeap, linked to its
// neighbours by index; a symbol merged into its left neighbour is dead.
type symbol struct {
	id         uint32
	prev, next int32
	dead       bool
}

// candidate is a pair that could be joined: the symbols at left and right
// holding leftID and rightID when it was found.
type candidate struct {
	merge
	left, right     int32
	leftID, rightID uint32
}

// mergeHeap is a binary min-heap of candidates ordered by rank, then by
// position, which is the order the linear merge joins pairs in.
type mergeHeap []candidate

func (h mergeHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].left < h[b].left
}

func (h *mergeHeap) push(c candidate) {
	*h = append(*h, c)
	s := *h
	for k := len(s) - 1; k > 0; {
		parent := (k - 1) / 2
		if !s.less(k, parent) {
			break
		}
		s[k], s[parent] = s[parent], s[k]
		k = parent
	}
}

func (h *mergeHeap) pop() candidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for k := 0; ; {
		small := k
		for _, child := range [2]int{2*k + 1, 2*k + 2} {
			if child < len(s) && s.less(child, small) {
				small = child
			}
		}
		if small == k {
			break
		}
		s[k], s[small] = s[small], s[k]
		k = small
	}
	*h = s
	return top
}

// mergeHeap applies the same BPE as mergeLinear in O(n log n), for long
// pieces such as runs of whitespace, long unbroken strings and the whole
// documents of vocabularies without a pre-tokenizer.
func (e *Encoder) mergeHeap(dst []uint32, ids []uint32) []uint32 {
	t := e.t
	syms := e.syms[:0]
	for k, id := range ids {
		syms = append(syms, symbol{id: id, prev: int32(k - 1), next: int32(k + 1)})
	}
	syms[len(syms)-1].next = -1
	h := e.heap[:0]
	consider := func(left int32) {
		if left < 0 || syms[left].next < 0 {
			return
		}
		right := syms[left].next
		m := t.rankOf(syms[left].id, syms[right].id)
		if m.rank != noRank {
			h.push(candidate{merge: m, left: left, right: right, leftID: syms[left].id, rightID: syms[right].id})
		}
	}
	for k := range syms {
		consider(int32(k))
	}
	for len(h) > 0 {
		c := h.pop()
		l, r := &syms[c.left], &syms[c.right]
		if l.dead || r.dead || l.next != c.right || l.id != c.leftID || r.id != c.rightID {
			continue
		}
		l.id = c.id
		l.next = r.next
		r.dead = true
		if r.next >= 0 {
			syms[r.next].prev = c.left
		}
		consider(l.prev)
		consider(c.left)
	}
	for k := int32(0); k >= 0; k = syms[k].next {
		dst = append(dst, syms[k].id)
	}
	e.syms, e.heap = syms, h
	return dst
}
