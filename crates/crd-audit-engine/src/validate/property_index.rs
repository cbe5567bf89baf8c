//! The properties of a compiled schema node: kept sorted by name (the order the validators
//! report in) and indexed by a small hash table, so that finding the schema of an object's
//! field costs one hash and one comparison instead of a binary search of string compares.

/// Sorted `(name, id)` pairs with a hash index.
#[derive(Debug, Default)]
pub struct PropertyIndex {
    entries: Box<[(Box<str>, u32)]>,
    /// Open addressing: 0 is empty, otherwise the entry's position + 1.
    slots: Box<[u32]>,
}

/// Below this many properties a linear scan is as fast as hashing.
const LINEAR: usize = 4;

fn hash(name: &str) -> usize {
    // Field names are short: mixing the length with the first and last eight bytes is enough
    // to tell them apart, in constant time.
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let b = name.as_bytes();
    let word = |bytes: &[u8]| {
        let mut w = [0u8; 8];
        w[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(w)
    };
    let (head, tail) = if b.len() <= 8 {
        (word(b), 0)
    } else {
        (word(&b[..8]), word(&b[b.len() - 8..]))
    };
    let mut h = (b.len() as u64).wrapping_mul(K);
    h = (h.rotate_left(5) ^ head).wrapping_mul(K);
    h = (h.rotate_left(5) ^ tail).wrapping_mul(K);
    (h ^ (h >> 29)) as usize
}

impl PropertyIndex {
    pub fn new(mut entries: Vec<(Box<str>, u32)>) -> PropertyIndex {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let slots = if entries.len() > LINEAR {
            let size = (entries.len() * 2).next_power_of_two();
            let mut slots = vec![0u32; size];
            for (i, (name, _)) in entries.iter().enumerate() {
                let mut at = hash(name) & (size - 1);
                while slots[at] != 0 {
                    at = (at + 1) & (size - 1);
                }
                slots[at] = i as u32 + 1;
            }
            slots.into_boxed_slice()
        } else {
            Box::new([])
        };
        PropertyIndex {
            entries: entries.into_boxed_slice(),
            slots,
        }
    }

    pub fn get(&self, name: &str) -> Option<u32> {
        if self.slots.is_empty() {
            return self
                .entries
                .iter()
                .find(|(k, _)| k.as_ref() == name)
                .map(|(_, id)| *id);
        }
        let mask = self.slots.len() - 1;
        let mut at = hash(name) & mask;
        loop {
            match self.slots[at] {
                0 => return None,
                s => {
                    let (k, id) = &self.entries[s as usize - 1];
                    if k.as_ref() == name {
                        return Some(*id);
                    }
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// The properties in name order.
    pub fn iter(&self) -> std::slice::Iter<'_, (Box<str>, u32)> {
        self.entries.iter()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_name_and_nothing_else() {
        for n in [0usize, 1, 3, 4, 5, 17, 200] {
            let names: Vec<String> = (0..n)
                .map(|i| format!("field{i}xyzlonger{}", i * 7))
                .collect();
            let idx = PropertyIndex::new(
                names
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (Box::from(s.as_str()), i as u32))
                    .collect(),
            );
            for (i, s) in names.iter().enumerate() {
                assert_eq!(idx.get(s), Some(i as u32), "{s}");
            }
            assert_eq!(idx.get("absent"), None);
            assert_eq!(idx.get(""), None);
            let sorted: Vec<&str> = idx.iter().map(|(k, _)| k.as_ref()).collect();
            let mut want: Vec<&str> = names.iter().map(String::as_str).collect();
            want.sort();
            assert_eq!(sorted, want);
        }
    }
}
