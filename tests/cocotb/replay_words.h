// Helpers shared by the replay harnesses (replay_main.cpp, netlist_main.cpp): Verilated port
// values <-> little-endian 32-bit words, bit slices of word arrays, the stdin protocol reads.
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
