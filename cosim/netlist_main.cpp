// The network of `hdl.network.top_verilog` wired in C++ around one Verilated router module, for
// fast replay lockstep (cosim/replay.py, engine "netlist"). Same protocol and cycle
// convention as replay_main.cpp, which drives the Verilated network top instead.
//
// Why: in the network top the routers are a Verilator hierarchical block, and the parent
// schedules each block's DPI wrapper as combinational logic whose outputs feed its neighbours'
// inputs, so every router is evaluated several times per cycle until the links settle. The
// routers' outputs are a function of their registers only (hdl/router.py: no input-to-output
// path), so here each cycle (1) takes every router's outputs, (2) drives every router's inputs
// from them, as top_verilog's `assign`s do, and clocks each router once. The wiring comes from
// `NetworkTop.link_table` / `endpoint_ports`, the tables top_verilog writes its wiring from,
// through the generated header `netlist.h` (ports, table, sizes; written by replay.py).
// Link and credit latency 1 only (top_verilog adds registers for more; replay.py refuses).
//
// PS_THREADS=T (environment): routers split over T threads. Each thread clocks its routers and
// then takes their outputs into the other of two snapshot buffers (the neighbours' drive reads
// the current one), so a cycle costs one round of barriers: go, then done.
//
// Clocking: with the schedule cosim/eval_order.py recognizes (`eval_order.h`, PS_EVAL_ORDER 1)
// each group's routers are evaluated function by function, every router's input logic then
// every router's clocked logic, in eval's order within each router; else (or built with
// PS_EVAL_PER_ROUTER) with eval().
#include "Vpstar_router.h"
#include "Vpstar_router___024root.h"
#include "verilated.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <thread>
#include <vector>

#include "replay_words.h"

// generated: PS_N PS_R PS_P PS_E PS_W PS_RB, ps_links[N][R][2], ps_endpoints[E][2], and the
// port accessors ps_get_flit / ps_set_flit / ps_get_credit / ps_set_credit / ps_set_load
#include "netlist.h"
// generated after verilating (cosim/eval_order.py): PS_EVAL_ORDER, ps_ico, ps_nba
#include "eval_order.h"
// -DPS_EVAL_PER_ROUTER: eval() per router even so (replay's per_function=False)
#if PS_EVAL_ORDER && !defined(PS_EVAL_PER_ROUTER)
#define PS_PER_FUNCTION 1
#else
#define PS_PER_FUNCTION 0
#endif

constexpr int NW = (PS_W + 31) / 32;
static const u32 zero[NW + 1] = {0};         // an idle port's flit or load words

class Barrier {            // threads spin briefly, then sleep on a futex until the last one arrives
  public:
    explicit Barrier(int n) : n_(n), left_(n) {}
    void wait() {
        int gen = gen_.load(std::memory_order_acquire);
        if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            left_.store(n_, std::memory_order_relaxed);
            gen_.fetch_add(1, std::memory_order_release);
            syscall(SYS_futex, reinterpret_cast<int*>(&gen_), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
            return;
        }
        // spinning on a core the Python side wants (three threads on two cores) would take it
        // from the work; the futex returns at once if the generation has already moved on
        for (int spin = 0; spin < 200; spin++)
            if (gen_.load(std::memory_order_acquire) != gen) return;
        while (gen_.load(std::memory_order_acquire) == gen)
            syscall(SYS_futex, reinterpret_cast<int*>(&gen_), FUTEX_WAIT_PRIVATE, gen, nullptr, nullptr, 0);
    }
  private:
    const int n_;
    std::atomic<int> left_;
    std::atomic<int> gen_{0};
};

// The falling edge without an eval: the router has no negedge logic and its outputs are
// registers, so an eval at clk = 0 only re-runs the input logic (Verilator evaluates its `ico`
// region on every eval: about a third of the time). Verilator finds the next rising edge by
// comparing clk with its value at the last eval, so that value is set to 0 here instead. A
// Verilator whose root has no such member (another version) gets the plain eval.
template <class Root>
static inline auto forget_clock(Root* root, int) -> decltype(root->__Vtrigprevexpr___TOP__clk__0, bool()) {
    root->__Vtrigprevexpr___TOP__clk__0 = 0;
    return true;
}
template <class Root>
static inline bool forget_clock(Root*, long) { return false; }

static inline void fall(Vpstar_router* m) {
    m->clk = 0;
    if (!forget_clock(m->rootp, 0)) m->eval();
}

struct Net {
    std::vector<VerilatedContext*> ctx;
    std::vector<Vpstar_router*> r;
    // outputs per (router, port): buffer `cur` this cycle's, the other the next cycle's
    std::vector<u32> fv[2], fw[2], cv[2], cvc[2];
    int cur = 0;
    // endpoint inputs of the current cycle
    std::vector<u32> iv, iw;

    void snapshot(int r0, int r1, int b) {
        for (int i = r0; i < r1; i++)
            for (int k = 0; k < PS_P; k++) {
                size_t s = size_t(i) * PS_P + k;
                ps_get_flit(r[i], k, fv[b][s], &fw[b][s * NW]);
                ps_get_credit(r[i], k, cv[b][s], cvc[b][s]);
            }
    }

    void drive_and_clock(int r0, int r1) {
        const std::vector<u32>&fv = this->fv[cur], &fw = this->fw[cur], &cv = this->cv[cur], &cvc = this->cvc[cur];
        for (int i = r0; i < r1; i++) {
            Vpstar_router* m = r[i];
            for (int k = 0; k < PS_R; k++) {
                int r2 = ps_links[i][k][0], k2 = ps_links[i][k][1];
                if (r2 < 0) continue;                   // unwired inputs stay 0 (set at reset)
                size_t s = size_t(r2) * PS_P + k2;
                ps_set_flit(m, k, fv[s], &fw[s * NW]);
                ps_set_credit(m, k, cv[s], cvc[s]);
            }
            for (int k = PS_R; k < PS_P; k++) {
                int e = ps_ep_of[i][k - PS_R];
                if (e < 0) ps_set_flit(m, k, 0, zero);
                else ps_set_flit(m, k, iv[e], &iw[size_t(e) * NW]);
            }
#if !PS_PER_FUNCTION
            m->clk = 1; m->eval();             // inputs settle, then the edge (ico before act)
            fall(m);
#endif
        }
#if PS_PER_FUNCTION
        // what eval() runs at a rising edge (cosim/eval_order.py), one function for every router
        // before the next: the function's code stays hot. clk and eval's record of it stay 0.
        for (auto f : ps_ico)
            for (int i = r0; i < r1; i++) f(r[i]->rootp);
        for (auto f : ps_nba)
            for (int i = r0; i < r1; i++) f(r[i]->rootp);
#endif
    }
};

int main(int argc, char** argv) {
    if (argc < 5) { fprintf(stderr, "usage: replay E W VB LW\n"); return 2; }
    const int E = atoi(argv[1]), W = atoi(argv[2]), VB = atoi(argv[3]), LW = atoi(argv[4]);
    if (E != PS_E || W != PS_W) { fprintf(stderr, "netlist: built for E=%d W=%d\n", PS_E, PS_W); return 2; }
    (void)VB;
    const char* te = getenv("PS_THREADS");
    int T = te ? atoi(te) : 1;
    if (T < 1) T = 1;
    if (T > PS_N) T = PS_N;

    Net net;
    net.ctx.resize(T);
    for (int t = 0; t < T; t++) { net.ctx[t] = new VerilatedContext; net.ctx[t]->commandArgs(argc, argv); }
    auto group = [&](int t) { return std::pair<int, int>(int(int64_t(PS_N) * t / T), int(int64_t(PS_N) * (t + 1) / T)); };
    for (int t = 0; t < T; t++) {
        auto [a, b] = group(t);
        for (int i = a; i < b; i++) net.r.push_back(new Vpstar_router(net.ctx[t], "router"));
    }
    const size_t S = size_t(PS_N) * PS_P;
    for (int b = 0; b < 2; b++) {
        net.fv[b].assign(S, 0); net.fw[b].assign(S * NW, 0); net.cv[b].assign(S, 0); net.cvc[b].assign(S, 0);
    }
    net.iv.assign(PS_E, 0); net.iw.assign(size_t(PS_E) * NW, 0);

    // reset: two rising edges, then released at a falling edge (as replay_main.cpp)
    for (int i = 0; i < PS_N; i++) {
        Vpstar_router* m = net.r[i];
        ps_set_id(m, i);
        ps_set_up(m, i);
        for (int k = 0; k < PS_P; k++) ps_set_flit(m, k, 0, zero);
        for (int k = 0; k < PS_R; k++) ps_set_credit(m, k, 0, 0);
        ps_set_load(m, 0, zero);
        m->clk = 0; m->rst = 1; m->eval();
        for (int j = 0; j < 2; j++) { m->clk = 1; m->eval(); m->clk = 0; m->eval(); }
        m->rst = 0; m->eval();
    }

    // workers 1..T-1 run their groups' phases; the main thread runs group 0 and the endpoints
    std::atomic<int> phase{0};             // 1: snapshot, 2: drive, clock and snapshot, 3: quit
    Barrier go(T), done(T);
    auto run_group = [&](int ph, int a, int b) {
        if (ph == 1) { net.snapshot(a, b, net.cur); return; }
        net.drive_and_clock(a, b);
        net.snapshot(a, b, net.cur ^ 1);
    };
    std::vector<std::thread> workers;
    for (int t = 1; t < T; t++) {
        workers.emplace_back([&, t]() {
            auto [a, b] = group(t);
            for (;;) {
                go.wait();
                int ph = phase.load(std::memory_order_acquire);
                if (ph == 3) return;
                run_group(ph, a, b);
                done.wait();
            }
        });
    }
    auto run_phase = [&](int ph) {
        auto [a, b] = group(0);
        if (T > 1) { phase.store(ph, std::memory_order_release); go.wait(); }
        run_group(ph, a, b);
        if (T > 1) done.wait();
        if (ph == 2) net.cur ^= 1;
    };

    u32 last_dropped = 0;
    int status = 0;
    bool fresh = false;         // the current snapshot is of the routers as they are (not before a load)
    for (;;) {
        int cmd = fgetc(stdin);
        if (cmd == EOF || cmd == 'Q') break;
        if (cmd == 'L') {
            // rows of top_verilog's load_data: router in the low PS_RB bits, the router's load payload above
            u32 n = read_val<u32>();
            const int LWW = (LW + 31) / 32;
            std::vector<u32> row(LWW + 1), payload(LWW + 1);
            for (u32 k = 0; k < n; k++) {
                read_exact(row.data(), 4 * LWW);
                u32 rid = row[0] & ((1u << PS_RB) - 1);
                if (int(rid) >= PS_N) continue;        // as the top: no router matches
                std::fill(payload.begin(), payload.end(), 0);
                extract(row.data(), LWW, PS_RB, LW - PS_RB, payload.data());
                Vpstar_router* m = net.r[rid];
                ps_set_load(m, 1, payload.data());
                m->clk = 1; m->eval(); m->clk = 0; m->eval();
                ps_set_load(m, 0, zero);
                m->eval();
            }
            fresh = false;
            continue;
        }
        if (cmd != 'R') { fprintf(stderr, "netlist: unknown command %d\n", cmd); status = 3; break; }
        status = run_chunk("netlist", NW,
            [&](int64_t t, Answer& a) {
                if (!fresh) { run_phase(1); fresh = true; }
                const int c = net.cur;
                for (int e = 0; e < PS_E; e++) {
                    size_t s = size_t(ps_endpoints[e][0]) * PS_P + ps_endpoints[e][1];
                    if (net.fv[c][s]) a.eject(int32_t(t + 1), e, &net.fw[c][s * NW], NW);
                    if (net.cv[c][s]) a.credit(int32_t(t + 1), e, int32_t(net.cvc[c][s]));
                }
                u32 d = 0;
                for (int i = 0; i < PS_N; i++) d += net.r[i]->dropped;
                a.dropped(t, d, last_dropped);
            },
            [&]() { std::fill(net.iv.begin(), net.iv.end(), 0); },
            [&](int e, const u32* words) {
                net.iv[e] = 1;
                memcpy(&net.iw[size_t(e) * NW], words, 4 * NW);
            },
            [&]() { run_phase(2); });
        if (status) break;
    }
    if (T > 1) { phase.store(3, std::memory_order_release); go.wait(); }
    for (auto& w : workers) w.join();
    for (auto* m : net.r) { m->final(); delete m; }
    return status;
}
