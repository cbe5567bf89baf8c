//! A cheap pass over the fuzz targets (`fuzz/`, `crd_audit_engine::fuzz`) without libFuzzer: each
//! target replays its seed corpus (`fuzz/corpus/TARGET/`) and inputs derived from it
//! (prefixes, byte flips, repetitions), none of which may panic. The real fuzzing runs with
//! `cargo fuzz run TARGET` (fuzz/README.md).

use std::path::PathBuf;

/// A small deterministic generator (xorshift), so that failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Inputs derived from a seed.
fn variants(seed: &[u8], rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for cut in [seed.len() / 3, seed.len() / 2, seed.len().saturating_sub(1)] {
        out.push(seed[..cut].to_vec());
    }
    for _ in 0..8 {
        let mut v = seed.to_vec();
        if v.is_empty() {
            break;
        }
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(v.len());
            v[i] = match rng.below(4) {
                0 => {
                    let specials = b"{}[]:,-\n\"'&*!#|>%@`";
                    specials[rng.below(specials.len())]
                }
                1 => v[i] ^ (1 << rng.below(8)),
                2 => b'0' + rng.below(10) as u8,
                _ => b' ',
            };
        }
        out.push(v);
    }
    // A chunk of the seed repeated in place.
    if seed.len() > 4 {
        let (a, b) = (rng.below(seed.len()), rng.below(seed.len()));
        let (a, b) = (a.min(b), a.max(b));
        let mut v = seed[..b].to_vec();
        for _ in 0..3 {
            v.extend_from_slice(&seed[a..b]);
        }
        v.extend_from_slice(&seed[b..]);
        out.push(v);
    }
    out
}

#[test]
fn every_target_survives_its_corpus_and_variants() {
    let root = crd_audit_engine::testing::workspace_root().join("fuzz/corpus");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (name, target) in crd_audit_engine::fuzz::TARGETS {
        let dir = root.join(name);
        let mut seeds: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        seeds.sort();
        assert!(!seeds.is_empty(), "{}: no seeds", dir.display());
        let mut runs = 0;
        for path in &seeds {
            let seed = std::fs::read(path).unwrap();
            for input in std::iter::once(seed.clone()).chain(variants(&seed, &mut rng)) {
                let outcome = std::panic::catch_unwind(|| target(&input));
                assert!(
                    outcome.is_ok(),
                    "{name} panicked on a variant of {}: {:?}",
                    path.display(),
                    String::from_utf8_lossy(&input)
                );
                runs += 1;
            }
        }
        eprintln!("fuzz smoke: {name}: {} seeds, {runs} inputs", seeds.len());
    }
}
