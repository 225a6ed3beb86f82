package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/retrysim/retrysim/sim"
)

// WorldVersion names the encoding of World; Digest hashes it with the
// settings, so that a change of encoding changes every digest.
const WorldVersion = "retrysim/world/v1"

// maxListed is the most entries of a list World shows one by one; a
// longer list (the phases of a capacity trace) is one setting: its length
// and the digest of its entries.
const maxListed = 64

// A Setting is one value of a scenario's world: Path names it by the
// fields of the models that hold it, in snake case
// ("server.phases[0].duration"); Value is written as the model holds it
// ("2s", "6", a quoted string, the type of a model: "sim.CapacityWindows").
type Setting struct {
	Path, Value string
}

// String writes the setting as World's listing and a report's origin do:
// "PATH = VALUE".
func (s Setting) String() string { return s.Path + " = " + s.Value }

// ParseSetting reads what String writes.
func ParseSetting(text string) (Setting, error) {
	path, value, ok := strings.Cut(text, " = ")
	if !ok || path == "" || strings.ContainsAny(path, " \n") {
		return Setting{}, fmt.Errorf("setting %q: want PATH = VALUE", text)
	}
	return Setting{path, value}, nil
}

// World lists the world s runs its policies in: its server, its workload
// (the clients, their arrivals and think times) and its incident, as the
// scenario holds them after defaults and any sweep parameter set on it.
// The policies (with every policy's rules: max_attempts, deadline, …),
// the name, description, seed, check_seeds and expectations are not part
// of it: a check compares policies within one world, on the seeds its
// baseline names. Zero values (false, 0, "", an empty list, no model) are
// left out, so that a field a later version adds with a zero default
// leaves the world of a scenario that does not use it as it was. The
// listing is the same on every machine and run.
func (s *Scenario) World() []Setting {
	var w worldWriter
	w.walk("server", reflect.ValueOf(&s.Server).Elem())
	w.walk("workload", reflect.ValueOf(&s.Workload).Elem())
	w.walk("incident", reflect.ValueOf(s.Incident))
	return w.out
}

// Digest is "sha256:" and the hex SHA-256 of WorldVersion and s's World,
// one setting a line: two scenarios have the same digest when their
// servers, workloads and incidents are the same, whatever their
// policies, comments, layout or file.
func (s *Scenario) Digest() string { return WorldDigest(s.World()) }

// WorldDigest is the digest of a world (Digest).
func WorldDigest(world []Setting) string {
	h := sha256.New()
	h.Write([]byte(WorldVersion + "\n"))
	for _, st := range world {
		h.Write([]byte(st.String() + "\n"))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// WorldChange is a setting that differs between two worlds; Old or New
// is "" where that world does not have it (a zero value).
type WorldChange struct {
	Path, Old, New string
}

// String says what changed: "server.phases[0].duration: 2s, now 4s".
func (c WorldChange) String() string {
	none := func(v string) string {
		if v == "" {
			return "(none)"
		}
		return v
	}
	return c.Path + ": " + none(c.Old) + ", now " + none(c.New)
}

// CompareWorlds lists the settings that differ between old and new: those
// of new in its order, then those only old has.
func CompareWorlds(old, new []Setting) []WorldChange {
	was := make(map[string]string, len(old))
	for _, s := range old {
		was[s.Path] = s.Value
	}
	var out []WorldChange
	seen := make(map[string]bool, len(new))
	for _, s := range new {
		seen[s.Path] = true
		if v, ok := was[s.Path]; !ok || v != s.Value {
			out = append(out, WorldChange{Path: s.Path, Old: v, New: s.Value})
		}
	}
	for _, s := range old {
		if !seen[s.Path] {
			out = append(out, WorldChange{Path: s.Path, Old: s.Value})
		}
	}
	return out
}

// worldWriter lists settings as World does.
type worldWriter struct{ out []Setting }

func (w *worldWriter) add(path, value string) { w.out = append(w.out, Setting{path, value}) }

var (
	durationType = reflect.TypeFor[time.Duration]()
	stringerType = reflect.TypeFor[fmt.Stringer]()
	// distributionType is a sampled duration; one that is an integer is
	// a fixed duration (a fixed response time), written as a duration.
	distributionType = reflect.TypeFor[sim.Distribution]()
)

// walk lists v, found at path.
func (w *worldWriter) walk(path string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		// A model: its type, then its fields.
		e := v.Elem()
		for e.Kind() == reflect.Pointer && !e.IsNil() {
			e = e.Elem()
		}
		if e.Kind() == reflect.Pointer {
			return
		}
		if e.Kind() != reflect.Struct {
			w.add(path, e.Type().String()+"("+leaf(e)+")")
			return
		}
		w.add(path, e.Type().String())
		w.fields(path, e)
	case reflect.Pointer:
		if !v.IsNil() {
			w.walk(path, v.Elem())
		}
	case reflect.Struct:
		w.fields(path, v)
	case reflect.Slice, reflect.Array:
		n := v.Len()
		if n == 0 {
			return
		}
		if n > maxListed {
			var inner worldWriter
			for i := range n {
				inner.walk(fmt.Sprintf("[%d]", i), v.Index(i))
			}
			sum := WorldDigest(inner.out)
			w.add(path, fmt.Sprintf("%d entries, %s", n, sum[:len("sha256:")+16]))
			return
		}
		w.add(path, fmt.Sprintf("%d entries", n))
		for i := range n {
			w.walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
		}
	case reflect.Map:
		if v.Len() == 0 {
			return
		}
		keys := v.MapKeys()
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = leaf(k)
		}
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(names[a], names[b]) })
		w.add(path, fmt.Sprintf("%d entries", len(keys)))
		for _, i := range order {
			w.walk(path+"["+names[i]+"]", v.MapIndex(keys[i]))
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if !v.IsNil() {
			w.add(path, v.Kind().String())
		}
	default:
		if !v.IsZero() {
			w.add(path, leaf(v))
		}
	}
}

// fields lists the exported fields of struct v: a model's settings (its
// unexported fields are state it derives or observers set on a copy).
func (w *worldWriter) fields(path string, v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() {
			w.walk(path+"."+snake(f.Name), v.Field(i))
		}
	}
}

// leaf writes a value that is not a struct, list or model.
func leaf(v reflect.Value) string {
	t := v.Type()
	switch {
	case t == durationType || t.Kind() == reflect.Int64 && t.Implements(distributionType):
		return time.Duration(v.Int()).String()
	case v.CanInterface() && t.Implements(stringerType) && t.Kind() != reflect.Struct:
		return v.Interface().(fmt.Stringer).String()
	}
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Sprint(f)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	case reflect.String:
		return strconv.Quote(v.String())
	}
	return v.Kind().String()
}

// snake writes a Go field name in snake case: ResponseTime is
// response_time, P99 p99, LIFO lifo.
func snake(name string) string {
	var b strings.Builder
	r := []rune(name)
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}
