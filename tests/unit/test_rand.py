"""Unit tests for pysysbench.core.rand (spec 4.4, 4.5, 4.7)."""

from __future__ import annotations

import collections
import statistics

import pytest

from pysysbench.core.rand import (
    C_TEMPLATE,
    DISTRIBUTIONS,
    PAD_TEMPLATE,
    Rand,
    Unique,
    _compile_generic_template,
    _permute,
)

SEED = 12345
SHAPE_SAMPLES = 20_000

# The uniform doubles sysbench 1.0.20 draws with --rand-seed=7 (one worker,
# --percentile=0), as 52-bit mantissas: u = m / 2**52. Recorded once from a
# glibc random() + xoroshiro128+ model; feeding them in checks that the
# formulas round exactly like the binary (spec 4.7 second vector).
SEED7_MANTISSAS = (
    2430807390595415,
    2960734497972167,
    1836524210532567,
    3895724347534345,
    459556960995285,
    2433050923728002,
    3394644327640408,
    2683633549655361,
    715015698183060,
    1165545061184809,
    1811939876680873,
    4199517322721502,
    3636013287284232,
    551788987360463,
    1167645816517022,
    3020812313432134,
    3467332827693779,
    1838768598947203,
    4364279226050807,
    656780224903538,
    689998568387875,
    2308233974608911,
    1234666089815768,
    1296273195434959,
    2752095696350139,
    2878274402392859,
    2851815768802864,
    1410843904803894,
    264001682756093,
    3967247910464736,
    3786608792770204,
    2497627081101971,
    1635126693626804,
    3406461291354450,
    2381215198814078,
    3981242635680121,
    793238074489740,
    991217622128089,
    3674547843176618,
    3730472150646475,
    404491399176825,
    4363711161650810,
    735327639372020,
    3838741395325094,
    2072251732104121,
    2749459104927746,
    1412340961416362,
    3193753320028146,
    4270298213493983,
    334040241184498,
    1445729100886060,
    4445130395091615,
    3557427882889094,
    1221260729716051,
    3809831893969168,
    3954448039790068,
    3489088762087814,
    268275227631925,
    1089235074577334,
    4327005665793510,
    872957166662488,
    410309961968585,
    501147337758354,
    150226853730165,
    932167660419420,
    1496107686557607,
    4157656222836377,
    1155293413429379,
    1266108395173608,
    2541148612833196,
    419532362640234,
    1959033761023088,
    2788989407353318,
    1321914638985322,
    304926823524712,
    3690074765571486,
    660529751582691,
    2397415719538717,
    328131188017833,
    1732872011102088,
    3555814799452422,
    1690489172851216,
    4344752528806176,
    3906171893492226,
    3408721849455591,
    1816772243822590,
    382641270008034,
    1335954014514510,
    3764600651337077,
    4138409542961551,
    835976868231905,
    566778306649114,
    3032175062184147,
    940726996813871,
    1986695765740887,
    3976341603374042,
    541579446555628,
    219111983985656,
    2624738937944492,
    1184387549658954,
    909814155272158,
    4299542809318850,
    4029454147838775,
    720521293932315,
    2074795636911748,
    543039740211017,
)


class ScriptedSource:
    """A u source replaying fixed doubles and counting how many were drawn."""

    def __init__(self, values):
        self._it = iter(values)
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        return next(self._it)


def scripted(values, **kwargs) -> tuple[Rand, ScriptedSource]:
    rand = Rand(0, **kwargs)
    source = ScriptedSource(values)
    rand._u = source
    return rand, source


def fraction(values, predicate) -> float:
    return sum(1 for v in values if predicate(v)) / len(values)


# -- construction and reproducibility ------------------------------------------


def test_distributions_constant():
    assert DISTRIBUTIONS == ("uniform", "gaussian", "special", "pareto", "zipfian")


def test_invalid_rand_type_message():
    with pytest.raises(ValueError) as exc:
        Rand(1, rand_type="bogus")
    assert str(exc.value) == "Invalid random numbers distribution: bogus."


@pytest.mark.parametrize("rand_type", DISTRIBUTIONS)
def test_default_is_bound_to_rand_type(rand_type):
    rand = Rand(1, rand_type=rand_type)
    assert rand.default == getattr(rand, rand_type)
    twin = Rand(1, rand_type=rand_type)
    assert [rand.default(1, 1000) for _ in range(50)] == [getattr(twin, rand_type)(1, 1000) for _ in range(50)]


def draw_everything(rand: Rand) -> list:
    out = []
    for _ in range(20):
        out += [rand.uniform(1, 10**6), rand.gaussian(1, 10**6), rand.special(1, 10**6)]
        out += [rand.pareto(1, 10**6), rand.zipfian(1, 10**6), rand.default(1, 100)]
        out += [rand.uniform_double(), rand.string("##@@-#")]
    out.append(rand.string(C_TEMPLATE))
    return out


def test_same_seed_same_sequence():
    assert draw_everything(Rand(SEED)) == draw_everything(Rand(SEED))


def test_different_seed_different_sequence():
    assert draw_everything(Rand(SEED)) != draw_everything(Rand(SEED + 1))


def test_seed_none_uses_entropy():
    assert Rand(None).string(C_TEMPLATE) != Rand(None).string(C_TEMPLATE)


# -- bit-exact formulas (spec 4.7, --rand-seed=7 vector) --------------------------


def test_seed7_vector_bit_exact():
    rand, source = scripted(m / 2.0**52 for m in SEED7_MANTISSAS)
    expected = [
        ([5005, 5016, 4991], [4833, 5063, 5328], [2571, 1, 7965], "18-lp-x", 0.31360269079713499),
        ([5022, 5046, 5346], [3459, 5151, 4020], [204, 1, 1], "98-el-x", 0.12057904457374691),
    ]
    for want in expected:
        got = (
            [rand.special(1, 10000) for _ in range(3)],
            [rand.gaussian(1, 10000) for _ in range(3)],
            [rand.pareto(1, 10000) for _ in range(3)],
            rand.string("##-@@-x"),
            rand.uniform_double(),
        )
        assert got == want
    assert source.calls == len(SEED7_MANTISSAS)


# -- draw counts ------------------------------------------------------------------


def test_special_draw_counts():
    # Band branch: the single draw is reused. u*R >= t with R = 4t.
    rand, source = scripted([0.9])
    assert rand.special(1, 10000) in range(4976, 5051)
    assert source.calls == 1
    # Gaussian branch: 1 + spec_iter draws.
    rand, source = scripted([0.1] + [0.5] * 12)
    rand.special(1, 10000)
    assert source.calls == 13


def test_single_draw_distributions():
    for method in ("uniform", "pareto"):
        rand, source = scripted([0.3])
        getattr(rand, method)(1, 100)
        assert source.calls == 1
    rand, source = scripted([0.3] * 12)
    rand.gaussian(1, 100)
    assert source.calls == 12


def test_11s_gaussian_is_a_and_draws_nothing():
    # sysbench 1.1.0 sums --rand-spec-iter draws, an option it has not (0): no draw, and the
    # mean 0 * (1.0 / 0) is NaN, which x86-64 converts to 0 (its sysbench.rand.gaussian(0, 99)
    # prints 0 every time: test_face11_lua.py's EVENTS_11)
    rand, source = scripted([0.3], rand_type="gaussian", release="1.1")
    assert [rand.gaussian(5, 50), rand.default(1, 10**6), rand.gaussian(7, 7)] == [5, 1, 7]
    assert source.calls == 0
    assert rand.uniform(1, 100) == 31 and source.calls == 1  # the stream goes on untouched
    rand, source = scripted([0.3] * 12, rand_type="gaussian")  # 1.0: the mean of 12 draws
    assert rand.default(1, 100) == 31 and source.calls == 12


def test_the_options_release_picks_the_gaussian():
    class Opts:  # what Rand.from_options reads of the parsed options
        rand_type, rand_spec_iter, rand_spec_pct, rand_spec_res = "gaussian", 12, 1.0, 75.0
        rand_pareto_h, rand_zipfian_exp = 0.2, 0.8

        def __init__(self, compat):
            self.compat = compat

        def get(self, name, default=None):
            return self.compat if name == "sysbench_compat" else default

    assert {Rand.from_options(Opts("1.1"), 1).default(3, 10**6) for _ in range(5)} == {3}
    assert Rand.from_options(Opts("1.0"), 1).default(3, 10**6) != 3


def test_degenerate_range_returns_bound():
    rand = Rand(SEED)
    for method in DISTRIBUTIONS:
        assert {getattr(rand, method)(7, 7) for _ in range(200)} == {7}


def test_special_res_100_keeps_everything_in_band():
    # No gaussian branch, and the band now uses every u in [0, 1):
    # 1 + trunc(u*100.99 + 4949.505) spans 4950..5051.
    rand = Rand(SEED, spec_res=100)
    values = {rand.special(1, 10000) for _ in range(5000)}
    assert min(values) >= 4950 and max(values) <= 5051
    assert len(values) > 90


# -- distribution shapes (spec 4.4) -------------------------------------------------


def test_uniform_covers_both_ends():
    rand = Rand(SEED)
    values = collections.Counter(rand.uniform(1, 10) for _ in range(5000))
    assert set(values) == set(range(1, 11))
    assert min(values.values()) > 400


def test_special_band_10000():
    rand = Rand(SEED)
    values = [rand.special(1, 10000) for _ in range(SHAPE_SAMPLES)]
    assert 0.735 < fraction(values, lambda v: 4976 <= v <= 5050) < 0.77
    assert min(values) >= 1 and max(values) <= 10000


def test_special_band_1000():
    rand = Rand(SEED)
    values = [rand.special(1, 1000) for _ in range(SHAPE_SAMPLES)]
    in_band = fraction(values, lambda v: 498 <= v <= 506)
    # 75% band draws plus the gaussian branch's share of those 9 values.
    assert 0.745 < in_band < 0.785
    band = collections.Counter(v for v in values if 490 <= v <= 515)
    assert band[497] < band[498] / 5 and band[507] < band[506] / 5


def test_gaussian_mean_and_sd():
    rand = Rand(SEED)
    values = [rand.gaussian(1, 10000) for _ in range(SHAPE_SAMPLES)]
    assert abs(statistics.fmean(values) - 5000) < 30
    assert abs(statistics.pstdev(values) - 835) < 25


def test_pareto_shape():
    rand = Rand(SEED)
    values = [rand.pareto(1, 10000) for _ in range(SHAPE_SAMPLES)]
    assert 0.785 < fraction(values, lambda v: v <= 2000) < 0.815
    assert 0.265 < fraction(values, lambda v: v == 1) < 0.295
    assert max(values) <= 10000


def zipf_pmf(n: int, exponent: float) -> list[float]:
    weights = [k**-exponent for k in range(1, n + 1)]
    total = sum(weights)
    return [w / total for w in weights]


@pytest.mark.parametrize("exponent", [0.8, 1.0, 1.5, 0.0])
def test_zipfian_matches_power_law(exponent):
    n, samples = 50, SHAPE_SAMPLES
    rand = Rand(SEED, rand_type="zipfian", zipf_exp=exponent)
    counts = collections.Counter(rand.default(1, n) for _ in range(samples))
    assert set(counts) <= set(range(1, n + 1))
    pmf = zipf_pmf(n, exponent)
    total_variation = sum(abs(counts[k] / samples - pmf[k - 1]) for k in range(1, n + 1)) / 2
    assert total_variation < 0.03
    if exponent > 0:
        assert counts.most_common(1)[0][0] == 1


def test_zipfian_ratio_and_offset():
    rand = Rand(SEED)
    counts = collections.Counter(rand.zipfian(101, 1100) for _ in range(SHAPE_SAMPLES))
    assert min(counts) >= 101 and max(counts) <= 1100
    assert counts.most_common(1)[0][0] == 101
    # P(k)/P(1) ~ k**-0.8 (k = 2 and 4 are frequent enough to measure).
    for k in (2, 4):
        ratio = counts[100 + k] / counts[101]
        assert ratio == pytest.approx(k**-0.8, rel=0.12)


def test_invalid_parameters():
    with pytest.raises(ValueError):
        Rand(1, zipf_exp=-0.1)
    with pytest.raises(ValueError):
        Rand(1, spec_iter=0)
    with pytest.raises(ValueError):
        Rand(1, pareto_h=1.0)


# -- strings (spec 4.5) ----------------------------------------------------------


def test_template_constants():
    assert len(C_TEMPLATE) == 119 and len(PAD_TEMPLATE) == 59
    assert C_TEMPLATE.split("-") == ["#" * 11] * 10
    assert PAD_TEMPLATE.split("-") == ["#" * 11] * 5


@pytest.mark.parametrize("template", [C_TEMPLATE, PAD_TEMPLATE])
def test_row_strings_format(template):
    rand = Rand(SEED)
    for _ in range(200):
        text = rand.string(template)
        assert len(text) == len(template)
        for ch, tpl in zip(text, template):
            assert ch.isdigit() if tpl == "#" else ch == tpl


def test_letters_and_literals():
    rand = Rand(SEED)
    template = "@@#x-%s ü@"
    seen = set()
    for _ in range(300):
        text = rand.string(template)
        assert len(text) == len(template)
        for ch, tpl in zip(text, template):
            if tpl == "@":
                assert "a" <= ch <= "z"
                seen.add(ch)
            elif tpl == "#":
                assert "0" <= ch <= "9"
            else:
                assert ch == tpl
    assert len(seen) == 26


@pytest.mark.parametrize("template", ["", "plain", "100%"])
def test_template_without_draws(template):
    rand, source = scripted([])
    assert rand.string(template) == template
    assert source.calls == 0


@pytest.mark.parametrize("template", [C_TEMPLATE, "#", "a#%b##\x01\xff#", "@#@", "##ü#"])
def test_one_draw_per_placeholder_left_to_right(template):
    draws = template.count("#") + template.count("@")
    values = [(i + 0.5) / draws for i in range(draws)]
    rand, source = scripted(values)
    text = rand.string(template)
    assert source.calls == draws
    it = iter(values)
    expected = "".join(
        chr(int(48 + next(it) * 10)) if ch == "#" else chr(int(97 + next(it) * 26)) if ch == "@" else ch
        for ch in template
    )
    assert text == expected


# u values near the edges, including the largest doubles below 1, where
# 48 + u*10 rounds up to 58 (':'), as it does in sysbench.
EDGE_US = [0.0, 2.0**-53, 0.1, 0.5, 0.7, 0.9999999, 1 - 2.0**-52, 1 - 2.0**-53]


@pytest.mark.parametrize("template", [C_TEMPLATE, PAD_TEMPLATE, "#-x\x00#~#\xe9"])
def test_digit_fast_path_matches_generic(template):
    draws = template.count("#")
    reference = _compile_generic_template(template)
    rand = Rand(SEED)
    for start in range(len(EDGE_US)):
        values = [EDGE_US[(start + i) % len(EDGE_US)] for i in range(draws)]
        fast, _ = scripted(values)
        assert fast.string(template) == reference(ScriptedSource(values))
    for _ in range(50):
        values = [rand.uniform_double() for _ in range(draws)]
        fast, _ = scripted(values)
        assert fast.string(template) == reference(ScriptedSource(values))


def test_edge_u_gives_sysbench_overflow_char():
    rand, _ = scripted([1 - 2.0**-53, 1 - 2.0**-53])
    assert rand.string("#-#") == ":-:"


# -- unique numbers ------------------------------------------------------------


def test_unique_spec_vector():
    # Upstream start-up stream: random() calls 5 and 6 are 1957747793, 424238335;
    # the second seeds the index, the first the offset (spec 4.3, 4.7).
    unique = Unique(424238335, 1957747793)
    assert [unique.next() for _ in range(4)] == [2672933100, 2916245674, 2834291422, 4086920756]


def test_unique_matches_permute_formula():
    seed_index, seed_offset = 0xDEADBEEF, 12345
    mask = 0xFFFFFFFF
    index = _permute((_permute(seed_index) + 0x682F0161) & mask)
    offset = _permute((_permute(seed_offset) + 0x46790905) & mask)
    unique = Unique(seed_index, seed_offset)
    for i in range(1000):
        want = _permute(((_permute((index + i) & mask) + offset) & mask) ^ 0x5BF03635)
        assert unique.next() == want


def test_unique_no_repeats():
    unique = Unique(1, 2)
    values = [unique.next() for _ in range(100_000)]
    assert len(set(values)) == len(values)
    assert all(0 <= v <= 0xFFFFFFFF for v in values)


def test_unique_index_wraps_at_2_32():
    # Pick a seed whose start index is just below 2**32 and check the wrap.
    unique = Unique(0, 0)
    unique._counter = iter(range(0xFFFFFFFE, 0x100000002))
    values = [unique.next() for _ in range(4)]
    assert len(set(values)) == 4 and all(0 <= v <= 0xFFFFFFFF for v in values)


def test_permute_is_bijective_near_prime():
    prime = 4294967291
    domain = list(range(prime - 2000, 1 << 32)) + list(range(2000))
    images = [_permute(x) for x in domain]
    assert all(_permute(x) == x for x in range(prime, 1 << 32))
    assert len(set(images)) == len(images)


def test_thread_shares_of_the_run_permutation_are_disjoint_and_complete():
    """oltp_insert --auto_inc=off: one seed per run (kept in the values that worker
    processes receive), thread t of T takes indexes t, t + T, ...: together the
    threads draw exactly the run's one permutation, so ids never collide."""
    import pickle

    from pysysbench.core.options import Registry, Values
    from pysysbench.core.rand import thread_unique

    values = Values(Registry()).freeze()
    seed = values.unique_seed  # picked once, when parsed
    copy = pickle.loads(pickle.dumps(values))  # what a worker process gets
    assert copy.unique_seed == seed and copy.frozen
    threads, per_thread = 6, 500
    drawn = [thread_unique(values, t, threads) for t in range(threads)]
    ids = [u.next() for _ in range(per_thread) for u in drawn]
    whole = Unique(seed >> 32, seed & 0xFFFFFFFF)
    assert sorted(ids) == sorted(whole.next() for _ in range(threads * per_thread))
    assert len(set(ids)) == len(ids)


def test_the_default_summer_is_what_the_generator_makes():
    """rand._SUMMERS holds the default --rand-spec-iter's summer written out (no eval at start-up):
    the same function as the one _summer generates for any other count, draw for draw."""
    import random as _random

    from pysysbench.core import rand

    assert rand.DEFAULT_SPEC_ITER in rand._SUMMERS
    written = rand._SUMMERS[rand.DEFAULT_SPEC_ITER]
    generated = eval("lambda u: " + " + ".join(["u()"] * rand.DEFAULT_SPEC_ITER))  # noqa: S307
    assert written.__code__.co_code == generated.__code__.co_code
    assert written.__code__.co_names == generated.__code__.co_names
    for seed in range(20):
        a, b = _random.Random(seed), _random.Random(seed)
        assert written(a.random) == generated(b.random)
