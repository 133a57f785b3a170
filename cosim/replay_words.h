// Helpers shared by the replay harnesses (replay_main.cpp, netlist_main.cpp): Verilated port
// values <-> little-endian 32-bit words, bit slices of word arrays, the stdin protocol reads, and
// the 'R' command (`run_chunk`), which both harnesses run the same way around their own network.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

using u32 = uint32_t;

template <class T> constexpr int words_of() {
    if constexpr (std::is_integral_v<T>) return (int(sizeof(T)) + 3) / 4;
    else return int(sizeof(T)) / 4;            // VlWide<N>: N 32-bit words
}

template <class T> void get_words(const T& port, u32* out) {
    if constexpr (std::is_integral_v<T>) {
        uint64_t v = port;
        out[0] = u32(v);
        if (words_of<T>() > 1) out[1] = u32(v >> 32);
    } else {
        for (int i = 0; i < words_of<T>(); i++) out[i] = port[i];
    }
}

template <class T> void set_words(T& port, const u32* in) {
    if constexpr (std::is_integral_v<T>) {
        uint64_t v = in[0];
        if (words_of<T>() > 1) v |= uint64_t(in[1]) << 32;
        port = T(v);
    } else {
        for (int i = 0; i < words_of<T>(); i++) port[i] = in[i];
    }
}

// 32 bits of the bit vector `w` (nw words) starting at bit `off`
static inline u32 get32(const u32* w, int nw, int off) {
    int i = off >> 5, s = off & 31;
    uint64_t lo = i < nw ? w[i] : 0, hi = i + 1 < nw ? w[i + 1] : 0;
    return u32(((hi << 32) | lo) >> s);
}

static void extract(const u32* src, int nw, int off, int width, u32* dst) {
    for (int k = 0; k * 32 < width; k++) {
        u32 v = get32(src, nw, off + 32 * k);
        int left = width - 32 * k;
        dst[k] = left >= 32 ? v : (v & ((1u << left) - 1));
    }
}

static void insert(u32* dst, int off, int width, const u32* src) {
    for (int k = 0; k * 32 < width; k++) {
        int left = width - 32 * k;
        u32 v = left >= 32 ? src[k] : (src[k] & ((1u << left) - 1));
        int bit = off + 32 * k, i = bit >> 5, s = bit & 31;
        dst[i] |= v << s;
        if (s && left > 32 - s) dst[i + 1] |= v >> (32 - s);
    }
}

static void read_exact(void* p, size_t n) {
    if (fread(p, 1, n, stdin) != n) { fprintf(stderr, "replay harness: input ended early\n"); exit(3); }
}

template <class T> T read_val() { T v; read_exact(&v, sizeof v); return v; }


// the n sends of an 'R' command: cycle, endpoint, nw flit words each
static void read_sends(int64_t n, int nw, std::vector<int32_t>& cycle, std::vector<int32_t>& endpoint,
                       std::vector<u32>& words) {
    cycle.resize(n);
    endpoint.resize(n);
    words.resize(size_t(n) * nw);
    for (int64_t k = 0; k < n; k++) {
        cycle[k] = read_val<int32_t>();
        endpoint[k] = read_val<int32_t>();
        read_exact(&words[size_t(k) * nw], 4 * nw);
    }
}

// The answer to one 'R' command, collected cycle by cycle (the protocol of replay_main.cpp).
struct Answer {
    std::vector<uint8_t> ej, cr, dr;
    int64_t ne = 0, nc = 0, nd = 0;

    static void put(std::vector<uint8_t>& v, const void* p, size_t len) {
        const uint8_t* b = (const uint8_t*)p;
        v.insert(v.end(), b, b + len);
    }
    void eject(int32_t arrival, int32_t e, const u32* words, int nw) {
        put(ej, &arrival, 4); put(ej, &e, 4); put(ej, words, 4 * size_t(nw));
        ne++;
    }
    void credit(int32_t arrival, int32_t e, int32_t vc) {
        put(cr, &arrival, 4); put(cr, &e, 4); put(cr, &vc, 4);
        nc++;
    }
    // the network's dropped count read in cycle t; recorded when it differs from `last`
    void dropped(int64_t t, u32 d, u32& last) {
        if (d == last) return;
        int32_t tt = int32_t(t), dd = int32_t(d);
        put(dr, &tt, 4); put(dr, &dd, 4);
        nd++;
        last = d;
    }
    void write() const {
        std::vector<uint8_t> out;
        put(out, &ne, 8); put(out, &nc, 8); put(out, &nd, 8);
        out.insert(out.end(), ej.begin(), ej.end());
        out.insert(out.end(), cr.begin(), cr.end());
        out.insert(out.end(), dr.begin(), dr.end());
        fwrite(out.data(), 1, out.size(), stdout);
        fflush(stdout);
    }
};

// One 'R' command after its letter: reads t0, cycles and the sends, then for each cycle t of the
// chunk calls outputs(t, answer) (record what the network gives the endpoints in cycle t), clear()
// and send(endpoint, words) for each of cycle t's sends (the endpoint inputs of cycle t), and
// step() (apply them and clock the network once). Then writes the answer. Returns 0, or 3 after
// saying why on stderr (`who`: the harness's name).
template <class Outputs, class Clear, class Send, class Step>
int run_chunk(const char* who, int nw, Outputs outputs, Clear clear, Send send, Step step) {
    int64_t t0 = read_val<int64_t>(), cycles = read_val<int64_t>(), n = read_val<int64_t>();
    std::vector<int32_t> rc, re;
    std::vector<u32> rw;
    read_sends(n, nw, rc, re, rw);
    Answer answer;
    int64_t k = 0;
    for (int64_t t = t0; t < t0 + cycles; t++) {
        outputs(t, answer);
        clear();
        for (; k < n && rc[k] == t; k++) send(re[k], &rw[size_t(k) * nw]);
        if (k < n && rc[k] < t) { fprintf(stderr, "%s: records not sorted by cycle\n", who); return 3; }
        step();
    }
    if (k != n) { fprintf(stderr, "%s: %lld records outside the chunk\n", who, (long long)(n - k)); return 3; }
    answer.write();
    return 0;
}
