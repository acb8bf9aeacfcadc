// Peer benchmark: Go ID libraries as Debian packages them (golang-github-*-dev),
// built offline in GOPATH mode by ../run_peers.sh.
//
//	idmint-peer-go bench [-run-ms MS] [-runs R]   RESULT lines on stdout
//	idmint-peer-go cli FORMAT N                   N IDs, one per line
//
// Modes: binary (mint only), text (mint + .String()), shared2 (two goroutines
// on one generator: the package-level one where the library has nothing
// else), local2 (two goroutines, each with its own generator; only where the
// library has generator objects). GOMAXPROCS is 2.
//
// Deliberately absent: google/uuid NewV7 (added in google/uuid 1.5; Debian 12
// ships 1.3.0) and bwmarrin/snowflake (not packaged by Debian).
package main

import (
	crand "crypto/rand"
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"

	gofrs "github.com/gofrs/uuid"
	guuid "github.com/google/uuid"
	"github.com/oklog/ulid"
	"github.com/rs/xid"
	"github.com/segmentio/ksuid"
)

// sink receives a fold of every minted ID so that nothing is optimised away.
var sink uint64

var runMS = 250.0
var runs = 5

// timed runs body(n) on `threads` goroutines (n split evenly) and returns
// the wall time in ns (time.Since uses Go's monotonic clock reading).
func timed(threads int, n int, body func(n int) uint64) float64 {
	start := time.Now()
	if threads == 1 {
		sink ^= body(n)
	} else {
		var wg sync.WaitGroup
		res := make([]uint64, threads)
		for t := 0; t < threads; t++ {
			wg.Add(1)
			go func(t int) {
				defer wg.Done()
				res[t] = body(n / threads)
			}(t)
		}
		wg.Wait()
		for _, r := range res {
			sink ^= r
		}
	}
	return float64(time.Since(start).Nanoseconds())
}

// measure calibrates the count to about runMS per run (the calibration is
// the warm-up), then returns the median ns/ID of `runs` runs.
func measure(threads int, body func(n int) uint64) float64 {
	target := runMS * 1e6
	n := 256
	for {
		ns := timed(threads, n, body)
		if ns >= target/4 || n >= 1<<34 {
			if ns < 1 {
				ns = 1
			}
			n = int(float64(n) * target / ns)
			if n < 16*threads {
				n = 16 * threads
			}
			break
		}
		n *= 2
	}
	per := n / threads
	v := make([]float64, runs)
	for i := range v {
		v[i] = timed(threads, n, body) / float64(per*threads)
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

func report(impl, format, mode string, threads int, ns float64) {
	fmt.Printf("RESULT\t%s\t%s\t%s\t%d\t%.2f\n", impl, format, mode, threads, ns)
}

func fold16(b [16]byte) uint64 {
	return binary.LittleEndian.Uint64(b[0:8]) ^ binary.LittleEndian.Uint64(b[8:16])
}

func foldStr(s string) uint64 {
	return uint64(s[len(s)-1]) ^ uint64(len(s))<<8 ^ uint64(s[len(s)-2])<<16
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "idmint-peer-go:", err)
		os.Exit(1)
	}
}

// lockedMonotonic shares one oklog MonotonicEntropy between goroutines.
// oklog/ulid 2.0.2 (Debian 12) has no LockedMonotonicReader yet (2.1 added
// one); its documentation says to guard the entropy with a mutex, which is
// what this does around the whole mint, as callers of 2.0.2 must.
type lockedMonotonic struct {
	mu sync.Mutex
	e  *ulid.MonotonicEntropy
}

func (l *lockedMonotonic) mint() ulid.ULID {
	l.mu.Lock()
	id := ulid.MustNew(ulid.Timestamp(time.Now()), l.e)
	l.mu.Unlock()
	return id
}

func benchGoogle() {
	for _, pool := range []bool{false, true} {
		impl := "go:google/uuid"
		if pool {
			// Not thread-safe to toggle; nothing else runs meanwhile.
			guuid.EnableRandPool()
			impl = "go:google/uuid+pool"
		} else {
			guuid.DisableRandPool()
		}
		bin := func(n int) uint64 {
			var acc uint64
			for i := 0; i < n; i++ {
				acc ^= fold16(guuid.New())
			}
			return acc
		}
		text := func(n int) uint64 {
			var acc uint64
			for i := 0; i < n; i++ {
				acc ^= foldStr(guuid.New().String())
			}
			return acc
		}
		report(impl, "uuidv4", "binary", 1, measure(1, bin))
		report(impl, "uuidv4", "text", 1, measure(1, text))
		report(impl, "uuidv4", "shared2", 2, measure(2, bin))
	}
	guuid.DisableRandPool()
}

func benchGofrs() {
	for _, format := range []string{"uuidv4", "uuidv7"} {
		mint := func(g gofrs.Generator) gofrs.UUID {
			var u gofrs.UUID
			var err error
			if format == "uuidv7" {
				u, err = g.NewV7()
			} else {
				u, err = g.NewV4()
			}
			must(err)
			return u
		}
		shared := gofrs.DefaultGenerator
		bin := func(g gofrs.Generator) func(int) uint64 {
			return func(n int) uint64 {
				var acc uint64
				for i := 0; i < n; i++ {
					acc ^= fold16(mint(g))
				}
				return acc
			}
		}
		text := func(n int) uint64 {
			var acc uint64
			for i := 0; i < n; i++ {
				acc ^= foldStr(mint(shared).String())
			}
			return acc
		}
		local := func(n int) uint64 {
			return bin(gofrs.NewGen())(n)
		}
		report("go:gofrs/uuid", format, "binary", 1, measure(1, bin(shared)))
		report("go:gofrs/uuid", format, "text", 1, measure(1, text))
		report("go:gofrs/uuid", format, "shared2", 2, measure(2, bin(shared)))
		report("go:gofrs/uuid", format, "local2", 2, measure(2, local))
	}
}

func benchULID() {
	const impl = "go:oklog/ulid"
	entropy := ulid.Monotonic(crand.Reader, 0)
	bin := func(e *ulid.MonotonicEntropy) func(int) uint64 {
		return func(n int) uint64 {
			var acc uint64
			for i := 0; i < n; i++ {
				acc ^= fold16(ulid.MustNew(ulid.Timestamp(time.Now()), e))
			}
			return acc
		}
	}
	text := func(n int) uint64 {
		var acc uint64
		for i := 0; i < n; i++ {
			acc ^= foldStr(ulid.MustNew(ulid.Timestamp(time.Now()), entropy).String())
		}
		return acc
	}
	locked := &lockedMonotonic{e: ulid.Monotonic(crand.Reader, 0)}
	shared := func(n int) uint64 {
		var acc uint64
		for i := 0; i < n; i++ {
			acc ^= fold16(locked.mint())
		}
		return acc
	}
	local := func(n int) uint64 {
		return bin(ulid.Monotonic(crand.Reader, 0))(n)
	}
	report(impl, "ulid", "binary", 1, measure(1, bin(entropy)))
	report(impl, "ulid", "text", 1, measure(1, text))
	report(impl, "ulid", "shared2", 2, measure(2, shared))
	report(impl, "ulid", "local2", 2, measure(2, local))
}

func fold20(b [20]byte) uint64 {
	return binary.LittleEndian.Uint64(b[0:8]) ^ binary.LittleEndian.Uint64(b[8:16]) ^
		uint64(binary.LittleEndian.Uint32(b[16:20]))
}

func benchKSUID() {
	// ksuid.New uses the package's one reader (crypto/rand unless SetRand
	// changes it; we keep the CSPRNG) under a package-level mutex, so the
	// library has only a shared generator. local2 builds each KSUID from its
	// own goroutine's crypto/rand payload with ksuid.FromParts, the way a
	// caller avoids that mutex.
	const impl = "go:segmentio/ksuid"
	bin := func(n int) uint64 {
		var acc uint64
		for i := 0; i < n; i++ {
			acc ^= fold20(ksuid.New())
		}
		return acc
	}
	text := func(n int) uint64 {
		var acc uint64
		for i := 0; i < n; i++ {
			acc ^= foldStr(ksuid.New().String())
		}
		return acc
	}
	local := func(n int) uint64 {
		var acc uint64
		var payload [16]byte
		for i := 0; i < n; i++ {
			_, err := io.ReadFull(crand.Reader, payload[:])
			must(err)
			id, err := ksuid.FromParts(time.Now(), payload[:])
			must(err)
			acc ^= fold20(id)
		}
		return acc
	}
	report(impl, "ksuid", "binary", 1, measure(1, bin))
	report(impl, "ksuid", "text", 1, measure(1, text))
	report(impl, "ksuid", "shared2", 2, measure(2, bin))
	report(impl, "ksuid", "local2", 2, measure(2, local))
}

func benchXID() {
	// xid.New: time + machine id + pid + a package-level atomic counter; no
	// generator object, so only the shared form exists.
	const impl = "go:rs/xid"
	bin := func(n int) uint64 {
		var acc uint64
		for i := 0; i < n; i++ {
			id := xid.New()
			acc ^= binary.LittleEndian.Uint64(id[4:12])
		}
		return acc
	}
	text := func(n int) uint64 {
		var acc uint64
		for i := 0; i < n; i++ {
			acc ^= foldStr(xid.New().String())
		}
		return acc
	}
	report(impl, "xid", "binary", 1, measure(1, bin))
	report(impl, "xid", "text", 1, measure(1, text))
	report(impl, "xid", "shared2", 2, measure(2, bin))
}

// cli prints n IDs of one format through a 64 KiB bufio.Writer, using each
// library's allocation-free encoder where it has one.
func cli(format string, n int) error {
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	var buf [64]byte
	switch format {
	case "uuidv4": // google/uuid with its randomness pool, its fastest v4
		guuid.EnableRandPool()
		for i := 0; i < n; i++ {
			w.WriteString(guuid.New().String())
			w.WriteByte('\n')
		}
	case "uuidv7": // gofrs/uuid (google/uuid 1.3.0 has no v7)
		g := gofrs.NewGen()
		for i := 0; i < n; i++ {
			u, err := g.NewV7()
			if err != nil {
				return err
			}
			w.WriteString(u.String())
			w.WriteByte('\n')
		}
	case "ulid":
		e := ulid.Monotonic(crand.Reader, 0)
		for i := 0; i < n; i++ {
			id := ulid.MustNew(ulid.Timestamp(time.Now()), e)
			if err := id.MarshalTextTo(buf[:ulid.EncodedSize]); err != nil {
				return err
			}
			buf[ulid.EncodedSize] = '\n'
			w.Write(buf[:ulid.EncodedSize+1])
		}
	case "ksuid":
		for i := 0; i < n; i++ {
			b := ksuid.New().Append(buf[:0])
			b = append(b, '\n')
			w.Write(b)
		}
	case "xid":
		for i := 0; i < n; i++ {
			b := xid.New().Encode(buf[:20])
			buf[20] = '\n'
			w.Write(b[:21])
		}
	default:
		return fmt.Errorf("unknown format %q", format)
	}
	return w.Flush()
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: idmint-peer-go bench [-run-ms MS] [-runs R]")
	fmt.Fprintln(os.Stderr, "       idmint-peer-go cli uuidv4|uuidv7|ulid|ksuid|xid N")
	os.Exit(2)
}

func main() {
	runtime.GOMAXPROCS(2)
	args := os.Args[1:]
	if len(args) == 0 {
		usage()
	}
	switch args[0] {
	case "bench":
		for i := 1; i < len(args); i += 2 {
			if i+1 >= len(args) {
				usage()
			}
			v, err := strconv.ParseFloat(args[i+1], 64)
			if err != nil || v <= 0 {
				usage()
			}
			switch args[i] {
			case "-run-ms":
				runMS = v
			case "-runs":
				runs = int(v)
			default:
				usage()
			}
		}
		benchGoogle()
		benchGofrs()
		benchULID()
		benchKSUID()
		benchXID()
		fmt.Fprintf(os.Stderr, "idmint-peer-go: sink %x\n", sink)
	case "cli":
		if len(args) != 3 {
			usage()
		}
		n, err := strconv.Atoi(args[2])
		if err != nil || n < 0 {
			usage()
		}
		if err := cli(args[1], n); err != nil {
			fmt.Fprintln(os.Stderr, "idmint-peer-go:", err)
			os.Exit(1)
		}
	default:
		usage()
	}
}
