#!/usr/bin/env bash
# scripts/depgraph.sh - the dependency graph between idmintd's modules
# (server/), from the source, and a check that it has no cycle.
#
#   scripts/depgraph.sh [--dot] [--includes] [DIR]
#
# A module is a file's path under DIR (default: server/ of this tree)
# without its extension: conn.c and conn.h are the module `conn`,
# http/http_server.c is `http/http_server`. Module A depends on module B
# when one of A's files
#   - calls or names a function or variable that B's .c files define and
#     do not make static (Universal Ctags finds the definitions; the names
#     are matched as whole words in A's files with comments and string
#     literals removed), or
#   - includes one of B's headers (#include "..." resolving inside DIR):
#     these edges are printed, and checked too with --includes.
#
# It prints one line per module, `A -> B C ...` (the names that make each
# arrow follow in brackets), or with --dot the graph for Graphviz
# (scripts/depgraph.sh --dot | dot -Tsvg > server.svg). Then it checks the
# arrows (calls; with --includes, includes too):
#   - no cycle: each group of modules that reach each other is printed
#     with one cycle through it;
#   - the rooms (ROOMS below; docs/design.md, "server/ rooms"): an arrow
#     goes to a module of its own room or of a lower one, never up, never
#     sideways between two rooms of one level; a module of server/ with no
#     room is named too.
# Exit status: 0 when all holds, 1 when not, 2 for usage, 77 without
# Universal Ctags (apt-get install universal-ctags; ctest skips then).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dot=0
includes=0
dir=
for arg in "$@"; do
    case "$arg" in
    --dot) dot=1 ;;
    --includes) includes=1 ;;
    -h | --help)
        sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "depgraph.sh: unknown option $arg" >&2
        exit 2
        ;;
    *) dir=$arg ;;
    esac
done
dir=${dir:-$ROOT/server}
if [ ! -d "$dir" ]; then
    echo "depgraph.sh: $dir is not a directory" >&2
    exit 2
fi
if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
    echo "depgraph.sh: needs Universal Ctags (apt-get install universal-ctags)" >&2
    exit 77
fi

# The rooms of server/, lowest first: LEVEL ROOM MODULE... (a module is a
# path under server/ without its extension; docs/design.md says what each
# room is for). Only a module of the same room or of a lower level may be
# called; two rooms of one level do not call each other. "*/*" stands for
# every module in a folder that no other room names: the front ends'
# folders (http/, resp/, memcache/, and a new one without a line here).
ROOMS='
0 core     log buf options config/config_parser core/waitlist core/job core/counters tagtable pause notify
1 durable  hwm hwm_loop lease node
2 net      conn tls auth
2 service  services mint segments hlc keyed status
3 proto    */*
4 main     main server metrics
'

cd "$dir"

# The definitions: name, file (functions and variables that are not static).
defs=$(find . -name '*.c' -printf '%P\n' | LC_ALL=C sort |
    ctags -L - -f - --languages=C --kinds-C=fv --fields=+k --extras=-F |
    awk -F'\t' '$0 !~ /\tfile:/ { print $1 "\t" $2 }')

find . \( -name '*.c' -o -name '*.h' \) -printf '%P\n' | LC_ALL=C sort |
    DEFS="$defs" ROOMS="$ROOMS" DOT=$dot INCLUDES=$includes perl -e '
use strict;
use warnings;

sub module { my $f = shift; $f =~ s/\.[ch]$//; return $f; }

my (%def, %files);
for (split /\n/, $ENV{DEFS}) {
    my ($name, $file) = split /\t/;
    $def{$name} = module($file);
}
my @files = map { chomp; $_ } <STDIN>;
$files{$_} = 1 for @files;

# edges{A}{B} = { why => 1 }: calls by name, includes as "#include X".
my (%edge, %inc, %mods);
for my $f (@files) {
    my $m = module($f);
    $mods{$m} = 1;
    open my $fh, "<", $f or die "$f: $!";
    local $/;
    my $src = <$fh>;
    close $fh;
    (my $fdir = $f) =~ s{[^/]*$}{};
    while ($src =~ /^\s*#\s*include\s+"([^"]+)"/mg) {
        my $h = $1;
        my $path;
        for my $cand ("$fdir$h", $h) {
            (my $c = $cand) =~ s{(^|/)\./}{$1}g;
            1 while $c =~ s{[^/]+/\.\./}{};
            if ($files{$c}) { $path = $c; last; }
        }
        next unless defined $path;
        my $to = module($path);
        $inc{$m}{$to}{"#include \"$h\""} = 1 if $to ne $m;
    }
    # Comments, string and character literals, and preprocessor lines
    # out; what is left is matched word by word.
    $src =~ s{/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\x27(?:\\.|[^\x27\\\n])*\x27}{ }sg;
    $src =~ s{^\s*#[^\n]*(?:\\\n[^\n]*)*}{}mg;
    my %seen;
    for my $w ($src =~ /\b([A-Za-z_]\w*)\b/g) {
        next if $seen{$w}++;
        my $to = $def{$w};
        $edge{$m}{$to}{$w} = 1 if defined $to && $to ne $m;
    }
}
my %check;
for my $a (keys %edge) { $check{$a}{$_} = 1 for keys %{ $edge{$a} }; }
if ($ENV{INCLUDES}) {
    for my $a (keys %inc) { $check{$a}{$_} = 1 for keys %{ $inc{$a} }; }
}

my @mods = sort keys %mods;
if ($ENV{DOT}) {
    print "digraph server {\n  rankdir=TB;\n  node [shape=box, fontname=monospace];\n";
    for my $a (@mods) {
        my %to = (%{ $edge{$a} // {} }, %{ $inc{$a} // {} });
        for my $b (sort keys %to) {
            my $style = $edge{$a}{$b} ? "" : " [style=dashed]";
            print "  \"$a\" -> \"$b\"$style;\n";
        }
    }
    print "}\n";
} else {
    for my $a (@mods) {
        my %to = (%{ $edge{$a} // {} }, %{ $inc{$a} // {} });
        my @parts;
        for my $b (sort keys %to) {
            my @why = sort(keys %{ $edge{$a}{$b} // {} });
            push @why, sort(keys %{ $inc{$a}{$b} // {} });
            push @parts, "$b [" . join(", ", @why) . "]";
        }
        print "$a -> ", (@parts ? join("\n    ", "", @parts) : "(nothing)"), "\n";
    }
}

# Tarjan: the strongly connected components of the checked graph.
my ($index, @stack, %on, %idx, %low, @sccs) = (0);
my $strong;
$strong = sub {
    my $v = shift;
    $idx{$v} = $low{$v} = $index++;
    push @stack, $v;
    $on{$v} = 1;
    for my $w (sort keys %{ $check{$v} // {} }) {
        if (!defined $idx{$w}) {
            $strong->($w);
            $low{$v} = $low{$w} if $low{$w} < $low{$v};
        } elsif ($on{$w}) {
            $low{$v} = $idx{$w} if $idx{$w} < $low{$v};
        }
    }
    if ($low{$v} == $idx{$v}) {
        my @c;
        my $w;
        do { $w = pop @stack; $on{$w} = 0; push @c, $w; } while ($w ne $v);
        push @sccs, [ sort @c ] if @c > 1;
    }
};
for my $v (@mods) { $strong->($v) unless defined $idx{$v}; }

# One cycle through a component: the shortest way back to its first module.
sub cycle_of {
    my @c = @{ $_[0] };
    my %in = map { $_ => 1 } @c;
    my $start = $c[0];
    my %prev = ($start => undef);
    my @queue = ($start);
    while (@queue) {
        my $v = shift @queue;
        for my $w (sort keys %{ $check{$v} // {} }) {
            next unless $in{$w};
            if ($w eq $start) {
                my @path = ($v);
                unshift @path, $prev{ $path[0] } while defined $prev{ $path[0] };
                return join(" -> ", @path, $start);
            }
            next if exists $prev{$w};
            $prev{$w} = $v;
            push @queue, $w;
        }
    }
    return "";
}

# The rooms: every arrow level-down or within its room.
my (%room, %level, $bad);
for (split /\n/, $ENV{ROOMS}) {
    my ($lvl, $name, @ms) = split " ";
    next unless defined $name;
    for (@ms) { $room{$_} = $name; $level{$_} = $lvl; }
}
# "*/*": the modules in a folder not named above.
if (defined $room{"*/*"}) {
    for my $m (@mods) {
        next if defined $room{$m} || $m !~ m{/};
        $room{$m} = $room{"*/*"};
        $level{$m} = $level{"*/*"};
    }
}
for my $a (@mods) {
    if (!defined $room{$a}) {
        print STDERR "depgraph.sh: module $a has no room (ROOMS in scripts/depgraph.sh)\n";
        $bad = 1;
        next;
    }
    for my $b (sort keys %{ $check{$a} // {} }) {
        next unless defined $room{$b};
        next if $room{$a} eq $room{$b} || $level{$b} < $level{$a};
        my @why = sort(keys %{ $edge{$a}{$b} // {} });
        push @why, sort(keys %{ $inc{$a}{$b} // {} }) if $ENV{INCLUDES};
        print STDERR "depgraph.sh: $a ($room{$a}) -> $b ($room{$b}) points ",
            $level{$b} > $level{$a} ? "up" : "sideways", ": ", join(", ", @why), "\n";
        $bad = 1;
    }
}

my $what = $ENV{INCLUDES} ? "calls and includes" : "calls";
for my $c (@sccs) {
    print STDERR "depgraph.sh: cycle of ", scalar(@$c), " modules (", join(" ", @$c), "): ",
        cycle_of($c), "\n";
}
exit 1 if $bad || @sccs;
print STDERR "depgraph.sh: no cycle, every arrow down or within its room (", scalar(@mods),
    " modules, $what)\n";
exit 0;
'
