package main

// The shuffle exactly as docs/shuffle.md specifies it, written from that page alone.

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/bits"
)

var rankNames = []string{"JK", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"}

// pack is one 52-card pack: clubs, diamonds, hearts, spades, each ace to king (docs/shuffle.md §2).
func pack() []string {
	cards := make([]string, 0, 52)
	for _, suit := range "CDHS" {
		for rank := 1; rank <= 13; rank++ {
			cards = append(cards, rankNames[rank]+string(suit))
		}
	}
	return cards
}

// unshuffledDeck is `packs` packs one after the other, then the jokers.
func unshuffledDeck(packs, jokers int) []string {
	var deck []string
	for range packs {
		deck = append(deck, pack()...)
	}
	for range jokers {
		deck = append(deck, "JK")
	}
	return deck
}

// wordStream yields the 64-bit big-endian words of SHA256(key || u64be(counter)), counter from 0.
type wordStream struct {
	key     []byte
	counter uint64
	words   []uint64
}

func (s *wordStream) next() uint64 {
	if len(s.words) == 0 {
		block := make([]byte, 0, len(s.key)+8)
		block = append(block, s.key...)
		block = binary.BigEndian.AppendUint64(block, s.counter)
		digest := sha256.Sum256(block)
		s.counter++
		for k := 0; k < 32; k += 8 {
			s.words = append(s.words, binary.BigEndian.Uint64(digest[k:k+8]))
		}
	}
	word := s.words[0]
	s.words = s.words[1:]
	return word
}

// index draws a uniform index in [0, bound) by rejecting words at or above the largest multiple of bound below 2^64.
func (s *wordStream) index(bound uint64) uint64 {
	_, rem := bits.Div64(1, 0, bound) // 2^64 mod bound
	limit := -rem                     // 2^64 - (2^64 mod bound), modulo 2^64; 0 never happens for bound > 1
	for {
		word := s.next()
		if rem == 0 || word < limit {
			return word % bound
		}
	}
}

// shuffle is Fisher-Yates from the last position down, index 0 of the result being the top card.
func shuffle(cards []string, key []byte) []string {
	out := append([]string(nil), cards...)
	stream := &wordStream{key: key}
	for i := len(out) - 1; i > 0; i-- {
		j := stream.index(uint64(i) + 1)
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func dealKey(seed []byte, deal uint32) []byte {
	return binary.BigEndian.AppendUint32(append(append([]byte(nil), seed...), "/deal/"...), deal)
}

// shuffleSeed is S (docs/shuffle.md §1.1): the seed itself when no seat sent one, else
// SHA256(seed || u32be(len) || seat seed, for each seat in order, nil for a seat that sent none).
func shuffleSeed(seed []byte, seats [][]byte) []byte {
	framed, sent := append([]byte(nil), seed...), false
	for _, own := range seats {
		framed = binary.BigEndian.AppendUint32(framed, uint32(len(own)))
		framed = append(framed, own...)
		sent = sent || len(own) > 0
	}
	if !sent {
		return seed
	}
	digest := sha256.Sum256(framed)
	return digest[:]
}

func reshuffleKey(seed []byte, count uint32) []byte {
	return binary.BigEndian.AppendUint32(append(append([]byte(nil), seed...), "/reshuffle/"...), count)
}

// deckShape is what docs/shuffle.md §2's table gives for a variant, its table size and options.
type deckShape struct {
	packs, jokers, handSize int
	upcard                  bool
	reshuffleWholePile      bool // rummy40 reshuffles every face-up card; the others all but the top one
}

func shapeFor(variant string, players int, options map[string]int64) (deckShape, error) {
	opt := func(name string, fallback int) int {
		if value, ok := options[name]; ok {
			return int(value)
		}
		return fallback
	}
	switch variant {
	case "kalooki":
		return deckShape{packs: 2, jokers: 2, handSize: 13, upcard: true}, nil
	case "rummy40":
		packs := opt("packs", map[bool]int{true: 1, false: 2}[players <= 3])
		return deckShape{packs: packs, jokers: 2 * packs, handSize: 13, reshuffleWholePile: true}, nil
	case "rummy500":
		dealt := opt("cards_dealt", map[bool]int{true: 13, false: 7}[players == 2])
		return deckShape{packs: opt("packs", 1), jokers: opt("jokers", 0), handSize: dealt, upcard: true}, nil
	case "contract":
		packs := 3
		if players <= 4 {
			packs = 2
		} else if players == 5 {
			packs = opt("packs_for_5_players", 3)
		}
		return deckShape{packs: packs, jokers: 2 * packs, handSize: 13, upcard: true}, nil
	}
	return deckShape{}, fmt.Errorf("docs/shuffle.md names no variant %q", variant)
}

// dealOrder is the seats still playing, starting with the one after the dealer (docs/shuffle.md §5).
func dealOrder(active []bool, dealer int) []int {
	var order []int
	for step := 1; step <= len(active); step++ {
		seat := (dealer + step) % len(active)
		if active[seat] {
			order = append(order, seat)
		}
	}
	return order
}
