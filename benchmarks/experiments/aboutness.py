"""Aboutness tags, zero-shot: does a hidden "what this is about" term find changed facts?

On fact-change conversations the current statement often shares no word with the question
("Upgraded to a Pixel on Friday" for "What phone does Maren use?"), so BM25 misses it and the
sentence embedding ranks it low. The idea scored here: a fixed list of what personal
statements are about (:data:`TOPICS`, 272 categories of a person's life, each a label and a
short gloss), embedded once with the bundled model; each record, and each query, gets its
``m`` nearest categories with cosine >= ``floor`` as hidden extra BM25 terms (never in the
text or the embedding). The list was written from general knowledge, for people in general,
before the slot lists of ``rl/synthetic.py`` or any evaluation question were looked at, and
was not edited after any figure was seen.

Variants, side by side in one run, every turn kept, k=5, all on top of the shipped search
(``HybridConfig()``, newer-first on):

- ``shipped``: the shipped hybrid search;
- ``words m/floor``: tags on records only, as the words of the category's first gloss item
  ("dentist", "mobile phone"), matched by the question's own words;
- ``tags m/floor xw``: tags on query and records, as opaque terms (``zqtagdentistx``) that
  the tokenizer keeps whole; a record's tag counts ``w`` times (the query's once);
- ``tags qm=1 rm=3``: the query's single nearest category against the record's three;
- ``words+tags``: both;
- ``+ same-tag qm=q``: later supersedes earlier, restricted to same-tag pairs: among the 20
  best results of a question without a past-tense word, a later statement of the same
  speaker sharing one of the question's ``q`` categories (records: 2, floor 0.3) with an
  older one, scoring at least half as much, is placed just above it.

Fact-change sets: the six of ``recency_ablation.py`` (its functions score them) and a hand-
written set (``benchmarks/data/aboutness_facts.json``: 4 conversations, 8 people, 16 facts
each stated and later changed in other words, 16 current and 16 "before" questions, written
in phrasings of its own). LoCoMo: evidence recall@1/5/10 of categories 1-4 and per-category
recall@10 (as ``question_records.py``).

Choice inside training folds: variant (m, floor, w) chosen per held-out conversation on the
rest: the highest mean (cur@5 - stale>cur) over the first five fact-change sets with LoCoMo
recall@10 not below the shipped search's on the same training conversations (ties: higher
recall@10). A LoCoMo conversation is held out from LoCoMo with all five sets as training; a
conversation of the first five sets is held out from them with all of LoCoMo; sealed and the
hand-written set are scored with the choice made on all of the first five and LoCoMo.

Costs: tagging a record is one product of its vector with the category matrix and a top-m;
it is timed beside embedding the same texts, and a tagged search beside the shipped one.

Usage::

    PYTHONPATH=$PWD python benchmarks/experiments/aboutness.py \\
        --data ../shared/datasets/locomo/locomo_dev.json \\
        --out benchmarks/experiments/results/aboutness.txt
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_agentmem.embedding.embeddings import embed_records, embed_texts, resolve_embeddings
from langchain_agentmem.index.lexical import LexicalIndex, tokenize
from langchain_agentmem.index.speakers import NamedQuery
from langchain_agentmem.locomo import CATEGORIES
from langchain_agentmem.ranking import HybridConfig
from langchain_agentmem.ranking.newer_first import PAST_WORDS
from langchain_agentmem.rl.data import Conversation, embed_conversations, load_locomo, searched_as
from langchain_agentmem.rl.retrieval import hybrid_results, turn_counts

sys.path.insert(0, str(Path(__file__).resolve().parent))
from question_records import recalls
from recency_ablation import SETS, Ranker, embedded_sets, fact_scores

POOL = 100
HAND = Path(__file__).resolve().parents[1] / "data" / "aboutness_facts.json"
FloatArray = npt.NDArray[np.float32]

TOPICS: tuple[tuple[str, str], ...] = (
    # devices and accounts
    ("phone", "mobile phone, smartphone, handset model"),
    ("laptop", "laptop, computer, PC, Mac"),
    ("tablet", "tablet, iPad, e-reader"),
    ("watch", "wristwatch, smartwatch, fitness tracker"),
    ("headphones", "headphones, earbuds, speakers"),
    ("console", "games console, PlayStation, Xbox, Nintendo"),
    ("television", "TV set, television, screen"),
    ("camera", "camera, lens, photography gear"),
    ("carrier", "mobile network, phone plan, carrier, SIM"),
    ("internet", "internet provider, broadband, wifi, router"),
    ("email", "email address, inbox, mail account"),
    ("socialmedia", "social media, Instagram, Twitter, TikTok, followers"),
    ("software", "app, software, program, tool I use"),
    ("browser", "web browser, search engine"),
    ("password", "password, login, account security"),
    ("streaming", "streaming service, Netflix, Spotify, subscription"),
    ("programming", "programming language, coding, code editor"),
    # where one lives
    ("city", "city, town where I live"),
    ("country", "country, nation I live in"),
    ("neighbourhood", "neighbourhood, district, area of town"),
    ("address", "street address, postcode, where my home is"),
    ("home", "house, flat, apartment, place I live"),
    ("rent", "rent, mortgage, lease, housing cost"),
    ("landlord", "landlord, letting agent, property owner"),
    ("roommate", "roommate, flatmate, housemate"),
    ("neighbour", "neighbour, people next door"),
    ("hometown", "hometown, where I grew up"),
    ("birthplace", "place of birth, where I was born"),
    ("moving", "moving house, relocating, new place"),
    ("furniture", "furniture, sofa, bed, desk"),
    ("garden", "garden, yard, balcony, plants"),
    ("houseplants", "houseplants, indoor plants"),
    ("homeimprovement", "renovation, DIY, decorating, repairs at home"),
    ("utilities", "electricity, gas, water bills, energy supplier"),
    # work
    ("employer", "employer, company I work for"),
    ("job", "job title, role, position at work"),
    ("profession", "profession, occupation, career"),
    ("boss", "boss, manager, supervisor"),
    ("colleague", "colleague, coworker, team at work"),
    ("salary", "salary, pay, wage, income"),
    ("office", "office, workplace, where I work"),
    ("remotework", "working from home, remote work, hybrid work"),
    ("schedule", "work schedule, shifts, working hours"),
    ("business", "own business, startup, company I run"),
    ("sidejob", "side job, freelance work, side hustle"),
    ("jobsearch", "job hunting, interview, applying for jobs"),
    ("promotion", "promotion, raise, career progress"),
    ("retirement", "retirement, pension, retired"),
    ("unemployment", "unemployed, laid off, between jobs"),
    ("industry", "industry, field, sector I work in"),
    ("client", "client, customer I work with"),
    ("project", "project I am working on"),
    ("meeting", "meeting, conference call"),
    ("conference", "conference, trade show, work event"),
    ("volunteering", "volunteering, charity work, community service"),
    # education
    ("school", "school, high school, secondary school"),
    ("university", "university, college, campus"),
    ("degree", "degree, major, subject I study"),
    ("teacher", "teacher, professor, tutor"),
    ("course", "course, class, lesson, training"),
    ("exam", "exam, test, grades"),
    ("thesis", "thesis, dissertation, research"),
    ("language", "foreign language I am learning or speak"),
    ("student", "student life, studying, homework"),
    ("scholarship", "scholarship, student loan, tuition"),
    ("graduation", "graduation, diploma, finishing school"),
    # family and relationships
    ("partner", "partner, significant other, who I am with"),
    ("spouse", "husband, wife, spouse, married"),
    ("boyfriend", "boyfriend"),
    ("girlfriend", "girlfriend"),
    ("ex", "ex-partner, former boyfriend or girlfriend, breakup"),
    ("dating", "dating, dates, dating apps, romance"),
    ("wedding", "wedding, engagement, getting married"),
    ("divorce", "divorce, separation"),
    ("children", "kids, children, parenting"),
    ("son", "son, my boy"),
    ("daughter", "daughter, my girl"),
    ("baby", "baby, newborn, infant"),
    ("pregnancy", "pregnancy, expecting a child"),
    ("parents", "parents, mum and dad"),
    ("mother", "mother, mum, mom"),
    ("father", "father, dad"),
    ("siblings", "siblings, brothers and sisters"),
    ("brother", "brother"),
    ("sister", "sister"),
    ("grandparents", "grandparents, grandmother, grandfather"),
    ("grandchildren", "grandchildren, grandkids"),
    ("inlaws", "in-laws, mother-in-law, father-in-law"),
    ("relatives", "relatives, cousins, aunt, uncle, extended family"),
    ("friend", "friend, best friend, friendship"),
    ("family", "family life, family gathering"),
    ("adoption", "adoption, foster care"),
    ("babysitter", "babysitter, nanny, childcare, daycare"),
    # pets and animals
    ("pet", "pet, animal at home"),
    ("dog", "dog, puppy"),
    ("cat", "cat, kitten"),
    ("fish", "pet fish, aquarium"),
    ("bird", "pet bird, parrot"),
    ("horse", "horse, riding, stable"),
    ("reptile", "snake, lizard, turtle"),
    ("smallpet", "rabbit, hamster, guinea pig"),
    ("vet", "vet, veterinarian, animal clinic"),
    # health
    ("doctor", "doctor, GP, physician"),
    ("dentist", "dentist, dental care, teeth"),
    ("optician", "optician, eyesight, glasses, contact lenses"),
    ("therapist", "therapist, counsellor, therapy"),
    ("physio", "physiotherapist, rehabilitation"),
    ("specialist", "medical specialist, consultant, clinic"),
    ("hospital", "hospital, emergency room, ward"),
    ("pharmacy", "pharmacy, chemist, prescriptions"),
    ("medication", "medication, pills, medicine I take"),
    ("allergy", "allergy, allergic reaction"),
    ("illness", "illness, sickness, disease, condition"),
    ("chronic", "chronic condition, diabetes, asthma"),
    ("injury", "injury, broken bone, sprain"),
    ("surgery", "surgery, operation"),
    ("mentalhealth", "mental health, anxiety, depression, stress"),
    ("sleep", "sleep, insomnia, bedtime"),
    ("weight", "body weight, losing weight"),
    ("fitness", "fitness, workout, exercise routine"),
    ("gym", "gym, gym membership, weights"),
    ("healthinsurance", "health insurance, medical cover"),
    ("vaccination", "vaccination, vaccine, jab"),
    ("disability", "disability, accessibility, wheelchair"),
    ("smoking", "smoking, quitting, vaping"),
    ("hearing", "hearing, hearing aid"),
    ("skin", "skin care, skin condition"),
    ("period", "menstrual cycle, menopause"),
    ("checkup", "medical check-up, appointment, blood test"),
    # food and drink
    ("diet", "diet, eating habits, what I eat"),
    ("vegetarian", "vegetarian, vegan, plant-based"),
    ("favouritefood", "favourite food, favourite dish"),
    ("cuisine", "cuisine, Italian, Thai, Mexican food"),
    ("restaurant", "restaurant, cafe, place to eat"),
    ("coffee", "coffee, espresso, latte"),
    ("tea", "tea"),
    ("alcohol", "alcohol, wine, beer, drinking"),
    ("cooking", "cooking, recipes, kitchen"),
    ("baking", "baking, bread, cakes"),
    ("breakfast", "breakfast, morning meal"),
    ("lunch", "lunch, packed lunch"),
    ("dinner", "dinner, evening meal"),
    ("snack", "snacks, sweets, chocolate"),
    ("drink", "favourite drink, soft drink, juice"),
    ("foodallergy", "food intolerance, gluten, lactose, nut allergy"),
    ("groceries", "groceries, supermarket, food shopping"),
    ("takeaway", "takeaway, food delivery"),
    # hobbies and pastimes
    ("hobby", "hobby, pastime, free time"),
    ("sport", "sport I play or follow"),
    ("team", "sports team I support"),
    ("running", "running, jogging, marathon"),
    ("cycling", "cycling, bike rides"),
    ("swimming", "swimming, pool"),
    ("hiking", "hiking, walking, trails"),
    ("climbing", "climbing, bouldering"),
    ("yoga", "yoga, pilates, meditation"),
    ("martialarts", "martial arts, karate, boxing"),
    ("football", "football, soccer"),
    ("basketball", "basketball"),
    ("tennis", "tennis, badminton, squash"),
    ("golf", "golf"),
    ("skiing", "skiing, snowboarding"),
    ("surfing", "surfing, sailing, water sports"),
    ("dance", "dancing, dance class"),
    ("chess", "chess, board games, puzzles"),
    ("videogames", "video games, gaming"),
    ("reading", "reading, books"),
    ("book", "favourite book, novel I am reading"),
    ("author", "favourite author, writer"),
    ("writing", "writing, blog, poetry, journaling"),
    ("music", "music taste, genre I listen to"),
    ("band", "favourite band, singer, artist"),
    ("instrument", "musical instrument, guitar, piano, violin"),
    ("singing", "singing, choir, karaoke"),
    ("concert", "concert, gig, live music"),
    ("movie", "film, movie, cinema"),
    ("tvshow", "TV series, show I am watching"),
    ("podcast", "podcast, radio"),
    ("painting", "painting, drawing, art"),
    ("photography", "photography, taking photos"),
    ("crafts", "knitting, sewing, crafts, pottery"),
    ("gardening", "gardening, growing vegetables"),
    ("fishing", "fishing"),
    ("camping", "camping, outdoors, tent"),
    ("collecting", "collecting, collection"),
    ("theatre", "theatre, play, musical"),
    ("museum", "museum, gallery, exhibition"),
    ("festival", "festival, fair, carnival"),
    ("party", "party, celebration"),
    ("club", "club, society, group I belong to"),
    ("nightlife", "going out, bars, clubbing"),
    ("shopping", "shopping, buying things"),
    ("fashion", "clothes, fashion, outfit"),
    ("shoes", "shoes, trainers, sneakers"),
    ("jewellery", "jewellery, ring, necklace"),
    ("brand", "favourite brand"),
    ("carsenthusiast", "cars as a hobby, racing, motorsport"),
    # transport and travel
    ("car", "car I drive, vehicle model"),
    ("motorbike", "motorbike, scooter"),
    ("bicycle", "bicycle, bike I own"),
    ("commute", "commute, getting to work"),
    ("publictransport", "bus, train, metro, tram"),
    ("drivinglicence", "driving licence, driving test, learning to drive"),
    ("parking", "parking, garage"),
    ("flight", "flight, airline, airport"),
    ("travel", "travel, trip, journey"),
    ("holiday", "holiday, vacation, time off"),
    ("destination", "travel destination, place I visited"),
    ("hotel", "hotel, accommodation, Airbnb"),
    ("passport", "passport, visa"),
    ("roadtrip", "road trip, driving holiday"),
    # money
    ("bank", "bank, bank account"),
    ("creditcard", "credit card, debit card"),
    ("savings", "savings, saving money"),
    ("investment", "investments, stocks, shares"),
    ("crypto", "cryptocurrency, bitcoin"),
    ("debt", "debt, loan, owing money"),
    ("budget", "budget, spending, expenses"),
    ("insurance", "insurance, policy, cover"),
    ("tax", "taxes, tax return"),
    ("donation", "donating, giving to charity"),
    # services and people who serve one
    ("hairdresser", "hairdresser, barber, haircut"),
    ("mechanic", "mechanic, car repair, garage service"),
    ("lawyer", "lawyer, solicitor, legal matter"),
    ("accountant", "accountant, bookkeeper"),
    ("cleaner", "cleaner, housekeeper"),
    ("trainer", "personal trainer, coach"),
    ("plumber", "plumber, electrician, handyman"),
    ("delivery", "delivery, parcel, post"),
    # person and identity
    ("name", "my name, what I am called"),
    ("nickname", "nickname"),
    ("age", "age, how old I am"),
    ("birthday", "birthday, date of birth"),
    ("appearance", "appearance, looks"),
    ("hair", "hair colour, hairstyle"),
    ("tattoo", "tattoo, piercing"),
    ("height", "height, how tall I am"),
    ("personality", "personality, character, temperament"),
    ("nationality", "nationality, citizenship"),
    ("ethnicity", "heritage, culture, roots"),
    ("gender", "gender, pronouns, identity"),
    ("religion", "religion, faith, church, mosque, temple"),
    ("politics", "politics, political views, voting"),
    ("values", "values, beliefs, principles"),
    ("goal", "goal, ambition, plan for the future"),
    ("dream", "dream, wish, bucket list"),
    ("fear", "fear, phobia"),
    ("habit", "habit, routine"),
    ("morning", "morning routine, waking up"),
    ("favouritecolour", "favourite colour"),
    ("zodiac", "star sign, zodiac, horoscope"),
    ("mood", "mood, feelings today"),
    ("achievement", "achievement, award, proud of"),
    ("memory", "childhood memory, past experience"),
    ("anniversary", "anniversary, special date"),
    ("weekend", "weekend plans"),
    ("appointment", "appointment, booking, reservation"),
    ("deadline", "deadline, due date"),
    ("weather", "weather, climate, season"),
    ("environment", "environment, climate change, recycling"),
    ("news", "news, current events"),
    ("community", "community, local events"),
    ("legal", "court, police, legal trouble"),
    ("military", "military service, army, veteran"),
    ("activism", "activism, protest, campaign"),
    ("selfcare", "self-care, relaxing, spa"),
    ("gift", "gift, present"),
    ("letter", "letter, card, message"),
    ("faithpractice", "prayer, fasting, religious holiday"),
    ("holidayseason", "Christmas, Thanksgiving, Eid, Diwali, New Year"),
    ("loss", "death, grief, funeral, loss"),
    ("support", "support group, mentor, helping others"),
)
"""What personal statements are about: ``(label, gloss)``, written for people in general."""


@dataclass(frozen=True)
class Variant:
    """How tags are given and weighed (``words``/``tags`` off: the shipped search)."""

    name: str
    words: bool = False
    """Records get the words of their categories' first gloss item."""
    tags: bool = False
    """Records and queries get opaque category terms."""
    m: int = 1
    """Categories per record."""
    qm: int = 1
    """Categories per query."""
    floor: float = 0.3
    """Least cosine of a category given."""
    weight: float = 1.0
    """How many times a record's tag term counts."""


def tag_terms() -> tuple[list[str], list[Counter[str]]]:
    """Each category's opaque term (kept whole by the tokenizer) and its words' counts."""
    terms = []
    for label, _ in TOPICS:
        found = tokenize(f"zqtag{label}x")
        assert found == [f"zqtag{label}x"], label  # kept whole: no stem, no stop word
        terms.append(found[0])
    assert len(set(terms)) == len(terms)
    words = [Counter(tokenize(gloss.split(",")[0])) for _, gloss in TOPICS]
    return terms, words


def topic_matrix() -> FloatArray:
    """Each category's normalised embedding (``"label: gloss"``), one row each."""
    return embed_texts(resolve_embeddings(None), [f"{label}: {gloss}" for label, gloss in TOPICS])


def nearest(vectors: FloatArray, topics: FloatArray, m: int, floor: float) -> list[list[int]]:
    """Each row's ``m`` nearest categories with cosine >= ``floor``, nearest first."""
    sims = vectors @ topics.T
    top = np.argpartition(-sims, m - 1, axis=1)[:, :m]
    out = []
    for row, idx in zip(sims, top, strict=True):
        idx = idx[np.argsort(-row[idx])]
        out.append([int(i) for i in idx if row[i] >= floor])
    return out


class TaggedLexical(LexicalIndex):
    """BM25 whose queries also carry hidden tag terms (looked up by query text)."""

    def __init__(self, query_tags: dict[str, str]) -> None:
        super().__init__()
        self.query_tags = query_tags

    def normalised(self, query: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        extra = self.query_tags.get(query, "")
        return super().normalised(f"{query} {extra}" if extra else query)


def tagged_results(
    conv: Conversation,
    topics: FloatArray,
    variant: Variant,
    vocab: tuple[list[str], list[Counter[str]]],
    config: HybridConfig,
) -> list[list[tuple[int, float]]]:
    """:func:`~langchain_agentmem.rl.retrieval.hybrid_results` (every turn kept), with the
    variant's hidden terms in the lexical index and its queries."""
    terms, words = vocab
    ids = list(range(len(conv.turns)))
    counts = turn_counts(conv, ids, config)
    asked = [
        searched_as(conv, q.text) if config.named_speaker > 0 else NamedQuery(q.text)
        for q in conv.questions
    ]
    query_tags: dict[str, str] = {}
    if variant.words or variant.tags:
        near_topics = nearest(conv.turn_vectors, topics, variant.m, variant.floor)
        for c, near in zip(counts, near_topics, strict=True):
            for j in near:
                if variant.words:
                    c.update(words[j])
                if variant.tags:
                    c[terms[j]] += variant.weight  # type: ignore[assignment]
    if variant.tags:
        qnear = nearest(conv.question_vectors, topics, variant.qm, variant.floor)
        for a, near in zip(asked, qnear, strict=True):
            query_tags[a.text] = " ".join(terms[j] for j in near)
    lexical = TaggedLexical(query_tags)
    lexical.add_counts(ids, counts)
    return hybrid_results(conv, ids, POOL, config, queries=asked, lexical=lexical)


SAME_TAG_TOP = 20
"""How many of the best results the same-tag rule reorders."""


def same_tag_newer(
    conv: Conversation,
    pool: list[list[tuple[int, float]]],
    topics: FloatArray,
    m: int,
    qm: int,
    floor: float = 0.3,
    relevance: float = 0.5,
) -> list[list[tuple[int, float]]]:
    """Later supersedes earlier, for same-tag pairs only: among a question's best
    :data:`SAME_TAG_TOP` results, a later statement of the same speaker that shares one of
    the question's categories with an older one (and scores at least ``relevance`` x it) is
    placed just above it. Questions with a past-tense word are left alone."""
    rec = [set(t) for t in nearest(conv.turn_vectors, topics, m, floor)]
    qry = [set(t) for t in nearest(conv.question_vectors, topics, qm, floor)]
    out = []
    for q, tags, found in zip(conv.questions, qry, pool, strict=True):
        if not tags or PAST_WORDS.search(q.text):
            out.append(found)
            continue
        head = found[:SAME_TAG_TOP]
        ids = [rid for rid, _ in head]
        base = [score for _, score in head]
        placed = list(base)
        by_time = sorted(range(len(ids)), key=lambda i: (conv.turns[ids[i]].timestamp, ids[i]))
        for pos, b in enumerate(by_time):
            rb = ids[b]
            mine = rec[rb] & tags
            if not mine:
                continue
            older = [
                a
                for a in by_time[:pos]
                if conv.turns[ids[a]].speaker == conv.turns[rb].speaker
                and rec[ids[a]] & mine
                and placed[a] > placed[b]
                and base[b] >= relevance * base[a]
            ]
            if older:
                placed[b] = max(placed[a] for a in older) + 1e-6
        order = sorted(range(len(ids)), key=lambda i: (-placed[i], ids[i]))
        out.append([(ids[i], placed[i]) for i in order] + found[SAME_TAG_TOP:])
    return out


def variants() -> list[Variant]:
    """Every variant scored, the shipped search first."""
    out = [Variant("shipped")]
    for m in (1, 2, 3):
        for floor in (0.3, 0.4):
            out.append(Variant(f"words m={m} floor={floor}", words=True, m=m, floor=floor))
    for m in (1, 2, 3):
        for floor in (0.3, 0.4):
            for w in (0.5, 1.0, 2.0):
                out.append(
                    Variant(
                        f"tags m={m} floor={floor} x{w}",
                        tags=True,
                        m=m,
                        qm=m,
                        floor=floor,
                        weight=w,
                    )
                )
    for floor in (0.3, 0.4):
        out.append(Variant(f"tags qm=1 rm=3 floor={floor}", tags=True, m=3, qm=1, floor=floor))
        out.append(Variant(f"words+tags m=2 floor={floor}", True, True, 2, 2, floor))
    return out


Pools = dict[str, list[list[tuple[int, float]]]]
"""Per conversation, per question: ``(turn, score)`` best first."""


def ranker(pools: Pools) -> Ranker:
    """Rank by a variant's precomputed results."""

    def rank(conv: Conversation, qi: int, k: int) -> list[int]:
        return [rid for rid, _ in pools[conv.sample_id][qi][:k]]

    return rank


def chosen_ranker(pools: dict[str, Pools], choice: dict[str, str]) -> Ranker:
    """Rank each conversation by the variant chosen for it."""

    def rank(conv: Conversation, qi: int, k: int) -> list[int]:
        return [rid for rid, _ in pools[choice[conv.sample_id]][conv.sample_id][qi][:k]]

    return rank


LocomoRows = list[tuple[int, list[float]]]


def locomo_summary(rows: LocomoRows) -> list[float]:
    """R@1, R@5, R@10, then recall@10 per category."""
    overall = [float(np.mean([r[1][j] for r in rows])) for j in range(3)]
    per = [[r[1][2] for r in rows if r[0] == c] for c in CATEGORIES]
    return overall + [float(np.mean(v)) if v else float("nan") for v in per]


def shared_tags(
    convs: list[Conversation], raw: list[dict[str, Any]], topics: FloatArray, m: int, floor: float
) -> tuple[float, float]:
    """Share of current questions whose tags meet the current statement's, and the stale
    statements' (any of them)."""
    facts = {str(r["sample_id"]): [q["fact"] for q in r["qa"]] for r in raw}
    cur = stale = n = 0
    for conv in convs:
        rec = nearest(conv.turn_vectors, topics, m, floor)
        qry = nearest(conv.question_vectors, topics, m, floor)
        for qi, (q, fact) in enumerate(zip(conv.questions, facts[conv.sample_id], strict=True)):
            if fact["kind"] != "current":
                continue
            n += 1
            cur += bool(set(qry[qi]) & set(rec[q.evidence[0]]))
            olds = [i for i, t in enumerate(conv.turns) if t.dia_id in fact["stale"]]
            stale += any(set(qry[qi]) & set(rec[i]) for i in olds)
    return cur / max(n, 1), stale / max(n, 1)


def costs(
    locomo: list[Conversation], topics: FloatArray, vocab: tuple[list[str], list[Counter[str]]]
) -> list[str]:
    """Write and search costs of tagging, timed beside embedding the same texts."""
    emb = resolve_embeddings(None)
    texts = [t.text for t in locomo[0].turns[:256]]
    vectors = locomo[0].turn_vectors[:256]
    embed_records(emb, texts[:8])  # warm up
    started = time.perf_counter()
    embed_records(emb, texts)
    t_embed = time.perf_counter() - started
    reps = 50
    started = time.perf_counter()
    for _ in range(reps):
        nearest(vectors, topics, 3, 0.3)
    t_tag = (time.perf_counter() - started) / reps
    started = time.perf_counter()
    for row in vectors:
        nearest(row[None, :], topics, 3, 0.3)
    t_one = time.perf_counter() - started
    query = locomo[0].questions[0].text
    started = time.perf_counter()
    for _ in range(20):
        embed_texts(emb, [query])
    t_query = (time.perf_counter() - started) / 20
    qv = locomo[0].question_vectors[:1]
    started = time.perf_counter()
    for _ in range(1000):
        nearest(qv, topics, 2, 0.3)
    t_qtag = (time.perf_counter() - started) / 1000
    started = time.perf_counter()
    topic_matrix()
    t_topics = time.perf_counter() - started
    conv = locomo[0]
    timed = [Variant("shipped"), Variant("words", words=True, m=3, floor=0.3)]
    timed.append(Variant("tags", tags=True, m=3, qm=3, floor=0.3, weight=0.5))
    best = dict.fromkeys((v.name for v in timed), float("inf"))
    for _ in range(3):  # interleaved, the least of three
        for v in timed:
            t0 = time.perf_counter()
            tagged_results(conv, topics, v, vocab, HybridConfig())
            best[v.name] = min(best[v.name], time.perf_counter() - t0)
    per_q = {name: t / len(conv.questions) * 1000 for name, t in best.items()}
    return [
        f"Search ({conv.sample_id}, {len(conv.turns)} turns, {len(conv.questions)} questions,"
        " indexes built and every question searched, least of 3 interleaved runs): "
        + "; ".join(f"{name} {t:.2f} ms a question" for name, t in per_q.items())
        + f" (words {per_q['words'] / per_q['shipped']:.2f}x, tags "
        f"{per_q['tags'] / per_q['shipped']:.2f}x the shipped).",
        f"Write: embedding {len(texts)} LoCoMo turns as records {t_embed * 1000:.0f} ms "
        f"({t_embed / len(texts) * 1000:.2f} ms a record); tagging them (vectors x "
        f"{len(TOPICS)}x{topics.shape[1]} category matrix, top-3) {t_tag * 1000:.2f} ms in one "
        f"batch ({t_tag / t_embed:.2%} of embedding), {t_one * 1000:.1f} ms one record at a "
        f"time ({t_one / t_embed:.2%}).",
        f"Query: embedding one query {t_query * 1000:.1f} ms; tagging it {t_qtag * 1e6:.0f} us "
        f"({t_qtag / t_query:.2%}). Category matrix, once: {t_topics:.1f} s to embed, "
        f"{topics.nbytes / 1024:.0f} KiB.",
    ]


def main(argv: Sequence[str] | None = None) -> None:
    """Score every variant on the fact-change sets, the hand-written set and LoCoMo."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", required=True, help="LoCoMo JSON file")
    parser.add_argument("--n", type=int, default=6, help="synthetic conversations per set")
    parser.add_argument("--out", help="text file for the results")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    config = HybridConfig()
    raw, sets = embedded_sets(args.n)

    raw["hand"] = json.loads(HAND.read_text(encoding="utf-8"))
    sets["hand"] = embed_conversations(load_locomo(HAND))
    names = [name for name, *_ in SETS] + ["hand"]
    locomo = embed_conversations(load_locomo(args.data))
    topics = topic_matrix()
    vocab = tag_terms()
    check = locomo[0]
    assert tagged_results(check, topics, Variant("shipped"), vocab, config) == hybrid_results(
        check, range(len(check.turns)), POOL, config
    ), "the untagged search must be the shipped one"
    every = [c for name in names for c in sets[name]] + locomo
    pools: dict[str, Pools] = {}
    seconds: dict[str, float] = {}
    for variant in variants():
        t0 = time.perf_counter()
        pools[variant.name] = {
            c.sample_id: tagged_results(c, topics, variant, vocab, config) for c in every
        }
        seconds[variant.name] = time.perf_counter() - t0
        print(f"{variant.name}: {seconds[variant.name]:.1f} s", flush=True)
    by_id = {c.sample_id: c for c in every}
    for base in ("shipped", "words m=3 floor=0.3"):
        for qm in (1, 2):
            pools[f"{base} + same-tag qm={qm}"] = {
                sid: same_tag_newer(by_id[sid], found, topics, 2, qm)
                for sid, found in pools[base].items()
            }
    facts: dict[str, dict[str, tuple[float, float, float, float]]] = {}
    loco: dict[str, list[LocomoRows]] = {}
    for name, pool in pools.items():
        rank = ranker(pool)
        facts[name] = {s: fact_scores(sets[s], raw[s], rank) for s in names}
        loco[name] = [
            recalls(c, [[rid for rid, _ in found] for found in pool[c.sample_id]]) for c in locomo
        ]
    width = 40
    head = f"{'variant':<{width}}" + "".join(f"{s + ': c@1 c@5 st>c b@5':>30}" for s in names)
    head += f"{'R@1':>8}{'R@5':>8}{'R@10':>8}" + "".join(f"{c:>12}" for c in CATEGORIES.values())
    lines = [head, "-" * len(head)]

    def row(label: str, fs: dict[str, tuple[float, ...]], rows: LocomoRows) -> str:
        out = f"{label:<{width}}"
        for s in names:
            c1, c5, st, b5 = fs[s]
            out += f"{c1:>12.3f} {c5:>5.3f} {st:>5.3f} {b5:>5.3f}"
        vals = locomo_summary(rows)
        return (
            out + "".join(f"{v:>8.4f}" for v in vals[:3]) + "".join(f"{v:>12.3f}" for v in vals[3:])
        )

    for name in pools:
        lines.append(row(name, facts[name], [r for c in loco[name] for r in c]))

    # Choice inside training folds.
    first5 = [name for name, *_ in SETS[:5]]

    def select(skip_locomo: int | None, skip_fact: str | None) -> str:
        def train(name: str) -> tuple[float, float]:
            rows = [r for i, c in enumerate(loco[name]) if i != skip_locomo for r in c]
            r10 = float(np.mean([r[1][2] for r in rows]))
            rank = ranker(pools[name])
            gain = [
                fact_scores([c for c in sets[s] if c.sample_id != skip_fact], raw[s], rank)
                for s in first5
            ]
            return float(np.mean([g[1] - g[2] for g in gain])), r10

        scored = {name: train(name) for name in pools}
        floor = scored["shipped"][1]
        allowed = [name for name in pools if scored[name][1] >= floor]
        return max(allowed, key=lambda name: scored[name])

    overall = select(None, None)
    choice = {c.sample_id: overall for c in every}
    picks: list[str] = []
    for i, c in enumerate(locomo):
        choice[c.sample_id] = select(i, None)
        picks.append(f"{c.sample_id}: {choice[c.sample_id]}")
    fact_picks = Counter()
    for s in first5:
        for c in sets[s]:
            choice[c.sample_id] = select(None, c.sample_id)
            fact_picks[choice[c.sample_id]] += 1
    held_rank = chosen_ranker(pools, choice)
    held_facts = {s: fact_scores(sets[s], raw[s], held_rank) for s in names}
    held_loco = [
        recalls(c, [[rid for rid, _ in found] for found in pools[choice[c.sample_id]][c.sample_id]])
        for c in locomo
    ]
    lines.append("-" * len(head))
    lines.append(row("held-out choice", held_facts, [r for c in held_loco for r in c]))
    lines += [
        "",
        f"Choice on all training data (sealed, hand): {overall}.",
        "LoCoMo held-out choices: " + "; ".join(picks) + ".",
        "Fact-change held-out choices (30 conversations): "
        + ", ".join(f"{k} x{v}" for k, v in fact_picks.most_common())
        + ".",
        "",
        "Spread over LoCoMo conversations, recall@10 (shipped -> held-out choice): "
        + "; ".join(
            f"{c.sample_id} {locomo_summary(a)[2]:.3f}->{locomo_summary(b)[2]:.3f}"
            for c, a, b in zip(locomo, loco["shipped"], held_loco, strict=True)
        )
        + ".",
    ]
    for name in ("shipped", overall):
        rank = ranker(pools[name])
        per = [fact_scores([c], raw[s], rank)[1] for s in names[:6] for c in sets[s]]
        lines.append(
            f"cur@5 over the 36 synthetic conversations, {name}: mean {np.mean(per):.3f}, "
            f"sd {np.std(per):.3f}, min {min(per):.3f}, max {max(per):.3f}."
        )
    lines += [
        "",
        "Question tags meeting the current / any stale statement's tags (current questions):",
    ]
    for m in (1, 2, 3):
        for floor in (0.3, 0.4):
            cells = []
            for s in names:
                cur, stale = shared_tags(sets[s], raw[s], topics, m, floor)
                cells.append(f"{s} {cur:.2f}/{stale:.2f}")
            lines.append(f"  m={m} floor={floor}: " + "; ".join(cells))
    lines += ["", "Costs:", *costs(locomo, topics, vocab)]
    body = "\n".join(lines)
    print(body)
    if args.out:
        command = "PYTHONPATH=$PWD python benchmarks/experiments/aboutness.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        Path(args.out).write_text(
            f"{command}\n\nEvery turn kept (no policy), k=5, every row on top of the shipped "
            "search (HybridConfig(), newer-first on). Fact-change sets as recency_ablation.py "
            f"({args.n} conversations each; columns cur@1, cur@5, stale>cur, before@5) and the "
            "hand-written set (benchmarks/data/aboutness_facts.json). LoCoMo: evidence recall "
            "of categories 1-4, per category recall@10. 'words': records get the words of "
            "their m nearest categories' first gloss item (cosine >= floor); 'tags': records "
            "and queries get opaque category terms (a record's counted w times); see the "
            f"docstring. Ran in {time.perf_counter() - started:.0f} s.\n\n{body}\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
