// SPDX-License-Identifier: GPL-2.0-or-later
//
// Lookup MIB: a small service whose speed is its memory access, for
// bench/jvm.  It fills a long[] of MIB MiB on the Java heap, one slot at a
// time, then looks slots up at pseudo-random indexes until it is killed:
// four independent chains (four requests in flight), each lookup's slot
// chosen from the value the chain's previous lookup found, so that every
// lookup is a cache miss and, with 4K pages, a TLB miss whose page walk
// the next lookup of that chain waits for.
//
// Prints "ready pid=PID slots=N" once the table is filled, then every
// 0.5 s "rate EPOCH_MS LOOKUPS_PER_S X" (the wall clock at the end of the
// interval, the lookups done in it per second, and a byte of the chains'
// keys that keeps the lookups from being dead code), so that a bench can
// follow the throughput over time against other events.
//
// Lookup MIB check: the same service checking its own memory, for
// bench/soak.  Every slot holds mix(index), so each lookup also compares
// the value it found with the one it should have found, and every
// interval one more stretch of the table is compared in order, the whole
// table once per "sweep".  Each "rate" line then ends in the count of
// wrong values seen so far, and each finished sweep prints
// "check SWEEPS BAD".  Another loop, so that bench/jvm's is untouched.
public final class Lookup {
	private static final long INTERVAL_NS = 500_000_000L;
	private static final int BATCH = 1 << 14;

	private Lookup() {
	}

	// A 64-bit mixer: every input bit reaches every output bit.
	private static long mix(long z) {
		z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
		z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
		return z ^ (z >>> 31);
	}

	// A slot in [0, n) from the high 32 bits of h (multiply and shift: no division).
	private static int slot(long h, long n) {
		return (int) (((h >>> 32) * n) >>> 32);
	}

	// The lookups of main(), one chain, each value compared with what was
	// written, and STRETCH slots compared in order every interval.
	private static void checking(long[] table, long n) {
		final int stretch = 1 << 20;
		long k = 1, done = 0, bad = 0, sweeps = 0;
		int at = 0;
		long start = System.nanoTime();
		long next = start + INTERVAL_NS;
		for (;;) {
			for (int i = 0; i < BATCH; i++) {
				int s = slot(k, n);
				long v = table[s];
				if (v != mix(s))
					bad++;
				k = mix(k + v);
			}
			done += BATCH;
			long t = System.nanoTime();
			if (t >= next) {
				int end = (int) Math.min(n, (long) at + stretch);
				for (int i = at; i < end; i++)
					if (table[i] != mix(i))
						bad++;
				at = end;
				if (at == n) {
					at = 0;
					sweeps++;
					System.out.println("check " + sweeps + " " + bad);
				}
				System.out.println("rate " + System.currentTimeMillis() + " "
						+ (done * 1_000_000_000L / (t - start)) + " " + bad);
				System.out.flush();
				done = 0;
				start = t;
				next = t + INTERVAL_NS;
			}
		}
	}

	public static void main(String[] args) {
		if (args.length != 1 && !(args.length == 2 && args[1].equals("check"))) {
			System.err.println("usage: Lookup MIB [check]");
			System.exit(2);
		}
		long mib = Long.parseLong(args[0]);
		long n = mib * 1048576L / 8;
		if (n < 1024 || n > Integer.MAX_VALUE - 16) {
			System.err.println("Lookup: " + mib + " MiB is out of range (a long[] of 8 KiB to 16 GiB)");
			System.exit(2);
		}
		long[] table = new long[(int) n];
		for (int i = 0; i < table.length; i++)
			table[i] = mix(i);
		System.out.println("ready pid=" + ProcessHandle.current().pid() + " slots=" + n);
		System.out.flush();
		if (args.length == 2)
			checking(table, n);

		long k0 = 1, k1 = 2, k2 = 3, k3 = 4;
		long done = 0;
		long start = System.nanoTime();
		long next = start + INTERVAL_NS;
		for (;;) {
			for (int i = 0; i < BATCH; i++) {
				k0 = mix(k0 + table[slot(k0, n)]);
				k1 = mix(k1 + table[slot(k1, n)]);
				k2 = mix(k2 + table[slot(k2, n)]);
				k3 = mix(k3 + table[slot(k3, n)]);
			}
			done += 4L * BATCH;
			long t = System.nanoTime();
			if (t >= next) {
				// the chains' keys go into the line, so that no lookup is dead code
				System.out.println("rate " + System.currentTimeMillis() + " "
						+ (done * 1_000_000_000L / (t - start)) + " " + Long.toHexString((k0 ^ k1 ^ k2 ^ k3) & 0xff));
				System.out.flush();
				done = 0;
				start = t;
				next = t + INTERVAL_NS;
			}
		}
	}
}
