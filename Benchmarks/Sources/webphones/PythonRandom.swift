/// CPython's `random.Random` (MT19937, seeded as CPython seeds it), for the draws Tests/Load/web_phones.py
/// makes: `random()`, `choice` and the seeding of one generator per phone with a float from the run's. With
/// the same draws the Swift client plays the same phones as the Python one for a given `--seed` (the same
/// start moments, drop kinds, drop moments and backoff jitter), so that two runs differ only in the client.
struct PythonRandom {
    private var state = [UInt32](repeating: 0, count: 624)
    private var index = 624

    /// `random.Random(seed)` for an int.
    init(seed: Int) {
        self.init(key: Self.words(of: seed.magnitude))
    }

    /// `random.Random(seed)` for a float: CPython seeds with `hash(seed)`, as a size_t.
    init(seed: Double) {
        self.init(key: Self.words(of: UInt(bitPattern: Self.hash(seed))))
    }

    /// `random()`: 53 random bits as a float in [0, 1).
    mutating func random() -> Double {
        let a = Double(next() >> 5), b = Double(next() >> 6)
        return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)
    }

    /// `choice(items)`: `_randbelow_with_getrandbits`, which draws bit_length(n) bits until below n.
    mutating func choice<T>(_ items: [T]) -> T {
        let n = UInt32(items.count)
        let bits = 32 - n.leadingZeroBitCount
        var r = next() >> UInt32(32 - bits)
        while r >= n { r = next() >> UInt32(32 - bits) }
        return items[Int(r)]
    }

    // MARK: MT19937 (CPython's _randommodule.c)

    private init(key: [UInt32]) {
        seedState(19650218)
        var i = 1, j = 0
        for _ in 0..<max(624, key.count) {
            state[i] = (state[i] ^ ((state[i - 1] ^ (state[i - 1] >> 30)) &* 1664525)) &+ key[j] &+ UInt32(j)
            i += 1
            j += 1
            if i >= 624 {
                state[0] = state[623]
                i = 1
            }
            if j >= key.count { j = 0 }
        }
        for _ in 0..<623 {
            state[i] = (state[i] ^ ((state[i - 1] ^ (state[i - 1] >> 30)) &* 1566083941)) &- UInt32(i)
            i += 1
            if i >= 624 {
                state[0] = state[623]
                i = 1
            }
        }
        state[0] = 0x8000_0000
    }

    private mutating func seedState(_ seed: UInt32) {
        state[0] = seed
        for i in 1..<624 {
            state[i] = 1812433253 &* (state[i - 1] ^ (state[i - 1] >> 30)) &+ UInt32(i)
        }
        index = 624
    }

    private mutating func next() -> UInt32 {
        if index >= 624 { twist() }
        var y = state[index]
        index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9d2c_5680
        y ^= (y << 15) & 0xefc6_0000
        return y ^ (y >> 18)
    }

    private mutating func twist() {
        for k in 0..<624 {
            let y = (state[k] & 0x8000_0000) | (state[(k + 1) % 624] & 0x7fff_ffff)
            state[k] = state[(k + 397) % 624] ^ (y >> 1) ^ (y & 1 == 0 ? 0 : 0x9908_b0df)
        }
        index = 0
    }

    /// A number's 32-bit words, least significant first, at least one (init_by_array's key).
    private static func words(of value: UInt) -> [UInt32] {
        var words: [UInt32] = [], rest = value
        repeat {
            words.append(UInt32(truncatingIfNeeded: rest))
            rest >>= 32
        } while rest > 0
        return words
    }

    /// CPython's `hash(float)` (_Py_HashDouble): the value modulo 2^61 - 1, for a finite float.
    static func hash(_ value: Double) -> Int {
        let bits = 61, modulus: UInt64 = (1 << 61) - 1
        guard value.isFinite, value != 0 else { return 0 }
        var m = value.magnitude.significand / 2   // frexp: m in [0.5, 1)
        var e = Int(value.magnitude.exponent) + 1
        var x: UInt64 = 0
        while m != 0 {
            x = ((x << 28) & modulus) | x >> UInt64(bits - 28)
            m *= 268435456.0
            e -= 28
            let y = UInt64(m)
            m -= Double(y)
            x += y
            if x >= modulus { x -= modulus }
        }
        e = e >= 0 ? e % bits : bits - 1 - ((-1 - e) % bits)
        x = ((x << UInt64(e)) & modulus) | x >> UInt64(bits - e)
        var hash = Int(x)
        if value < 0 { hash = -hash }
        return hash == -1 ? -2 : hash
    }
}
