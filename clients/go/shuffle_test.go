package main

import (
	"encoding/base64"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The worked example of docs/shuffle.md, re-derived by this implementation of the page.
func TestWorkedExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/shuffle.md")
	if err != nil {
		t.Fatal(err)
	}
	field := func(name string) string {
		found := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` +(.+)$`).FindStringSubmatch(string(doc))
		if found == nil {
			t.Fatalf("docs/shuffle.md: no %q line in the worked example", name)
		}
		return strings.TrimSpace(found[1])
	}
	seed, err := hex.DecodeString(field("seed (hex)"))
	if err != nil {
		t.Fatal(err)
	}
	if b64, _ := base64.StdEncoding.DecodeString(field("seed (base64)")); string(b64) != string(seed) {
		t.Errorf("the base64 seed is not the hex seed")
	}
	if got := hex.EncodeToString(dealKey(seed, 1)); got != field("deal 1 key (hex)") {
		t.Errorf("deal key %s", got)
	}
	shape, _ := shapeFor("rummy40", 4, nil)
	deck := shuffle(unshuffledDeck(shape.packs, shape.jokers), dealKey(seed, 1))
	if len(deck) != 108 {
		t.Errorf("deck of %d cards", len(deck))
	}
	if got := strings.Join(deck[:10], " "); got != field("first ten cards") {
		t.Errorf("first ten cards %q, the page says %q", got, field("first ten cards"))
	}
}

// The worked example with the seats' seeds: the shuffle seed S and the first deal it gives.
func TestWorkedExampleWithSeats(t *testing.T) {
	doc, err := os.ReadFile("../../docs/shuffle.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(doc), "<!-- worked-example-seeds")
	if !found {
		t.Fatal("docs/shuffle.md: no worked example with the seats' seeds")
	}
	field := func(name string) []byte {
		line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` +(\S+)`).FindStringSubmatch(section)
		if line == nil {
			t.Fatalf("docs/shuffle.md: no %q line in the example with the seats' seeds", name)
		}
		value, err := hex.DecodeString(line[1])
		if err != nil {
			t.Fatal(err)
		}
		return value
	}
	seed := shuffleSeed(field("seed (hex)"), [][]byte{field("seat 0 seed"), field("seat 1 seed")})
	if got := hex.EncodeToString(seed); got != hex.EncodeToString(field("shuffle seed S")) {
		t.Errorf("shuffle seed %s", got)
	}
	if same := shuffleSeed(field("seed (hex)"), [][]byte{nil, nil}); string(same) != string(field("seed (hex)")) {
		t.Errorf("without seats' seeds the shuffle seed is not the seed")
	}
	shape, _ := shapeFor("rummy40", 2, nil)
	deck := shuffle(unshuffledDeck(shape.packs, shape.jokers), dealKey(seed, 1))
	want := regexp.MustCompile(`(?m)^first ten cards +(.+)$`).FindStringSubmatch(section)
	if want == nil || strings.Join(deck[:10], " ") != strings.TrimSpace(want[1]) {
		t.Errorf("first ten cards %v, the page says %v", deck[:10], want)
	}
}
