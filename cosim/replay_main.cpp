// Verilated `pstar_network` (packed endpoint buses) driven by a replay stream: the C++ side of
// cosim/replay.py. It knows nothing about routing or packets: it resets the network,
// loads the routers' tables, then per command runs a chunk of cycles, driving the endpoints'
// flits the Python side sends and answering with what the network gave the endpoints.
//
// Cycle t (the timing of the cocotb benches, tests/cocotb/network_bench.py): at the falling
// edge read the outputs, then apply cycle t's inputs; the rising edge registers them.
//
// Protocol (little-endian, stdin -> stdout). Flits travel as NW 32-bit words, NW = ceil(W / 32).
//   'L' u32 n, n x LW words   reset (always done first) then load rows, one per cycle
//   'R' i64 t0, i64 cycles, i64 n, n x (i32 cycle, i32 endpoint, NW words): run [t0, t0 + cycles)
//       answer: i64 ne, i64 nc, i64 nd, then ne x (i32 t + 1, i32 endpoint, NW words) ejected,
//       nc x (i32 t + 1, i32 endpoint, i32 vc) credits returned, nd x (i32 t, i32 dropped) each
//       cycle whose `dropped` differs from the cycle before (t: the cycle it was read in)
//   'Q' quit
// Arguments: E W VB LW (endpoints, flit width, credit VC bits, load_data width; LW = 0: no load port)
#include "Vpstar_network.h"
#include "verilated.h"

#include <vector>

#include "replay_words.h"

int main(int argc, char** argv) {
    if (argc < 5) { fprintf(stderr, "usage: replay E W VB LW\n"); return 2; }
    const int E = atoi(argv[1]), W = atoi(argv[2]), VB = atoi(argv[3]), LW = atoi(argv[4]);
    const int NW = (W + 31) / 32;
    Verilated::commandArgs(argc, argv);
    auto* top = new Vpstar_network;

    constexpr int IV = words_of<decltype(top->inject_valid)>(), ID = words_of<decltype(top->inject_data)>();
    constexpr int EV = words_of<decltype(top->eject_valid)>(), ED = words_of<decltype(top->eject_data)>();
    constexpr int CV = words_of<decltype(top->credit_valid)>(), CD = words_of<decltype(top->credit_vc)>();
    std::vector<u32> iv(IV), idata(ID), ev(EV), edata(ED), cv(CV), cd(CD), flit(NW + 1);
    std::vector<u32> zero_iv(IV, 0);

    auto tick = [&]() { top->clk = 1; top->eval(); top->clk = 0; top->eval(); };
    // reset: two rising edges, then released at a falling edge (as network_bench.reset_and_load)
    top->clk = 0; top->rst = 1;
    set_words(top->inject_valid, zero_iv.data());
    top->eval();
    tick(); tick();
    top->rst = 0;
    top->eval();
    u32 last_dropped = 0;

    for (;;) {
        int cmd = fgetc(stdin);
        if (cmd == EOF || cmd == 'Q') break;
        if (cmd == 'L') {
#ifdef PS_LOADABLE
            u32 n = read_val<u32>();
            const int LWW = (LW + 31) / 32;
            std::vector<u32> row(LWW);
            for (u32 k = 0; k < n; k++) {
                read_exact(row.data(), 4 * LWW);
                top->load_valid = 1;
                set_words(top->load_data, row.data());
                top->eval();
                tick();
            }
            top->load_valid = 0;
            top->eval();
            tick();
#else
            fprintf(stderr, "replay: this network has no load port\n");
            return 3;
#endif
            continue;
        }
        if (cmd != 'R') { fprintf(stderr, "replay: unknown command %d\n", cmd); return 3; }
        int status = run_chunk("replay", NW,
            [&](int64_t t, Answer& a) {             // outputs of cycle t
                get_words(top->eject_valid, ev.data());
                get_words(top->eject_data, edata.data());
                get_words(top->credit_valid, cv.data());
                get_words(top->credit_vc, cd.data());
                for (int e = 0; e < E; e++) {
                    if ((ev[e >> 5] >> (e & 31)) & 1) {
                        extract(edata.data(), ED, e * W, W, flit.data());
                        a.eject(int32_t(t + 1), e, flit.data(), NW);
                    }
                    if ((cv[e >> 5] >> (e & 31)) & 1) {
                        u32 vc = 0;
                        extract(cd.data(), CD, e * VB, VB, &vc);
                        a.credit(int32_t(t + 1), e, int32_t(vc));
                    }
                }
                a.dropped(t, top->dropped, last_dropped);
            },
            [&]() {
                std::fill(iv.begin(), iv.end(), 0);
                std::fill(idata.begin(), idata.end(), 0);
            },
            [&](int e, const u32* words) {
                iv[e >> 5] |= 1u << (e & 31);
                insert(idata.data(), e * W, W, words);
            },
            [&]() {
                set_words(top->inject_valid, iv.data());
                set_words(top->inject_data, idata.data());
                tick();             // the inputs settle in the same eval, before the edge (Verilator's ico region)
            });
        if (status) return status;
    }
    top->final();
    delete top;
    return 0;
}
