"""Synthetic conversations in which facts change, and how policies keep up with them.

:func:`generate` writes seeded LoCoMo-format conversations: two speakers chat over dated
sessions; mixed with small talk, each speaker states facts about themselves (city, job,
pet, partner, hobby, phone number, car) and later changes some of them ("I moved to
Lisbon" ... "we moved to Berlin"). Questions ask for the *current* fact, with the latest
statement as evidence; where a fact changed, a question phrased "before ..." asks for the
earlier one with the earlier statement as evidence.

:func:`measure_fact_change` runs policies through :class:`~langchain_agentmem.AgentMemory`
on such conversations and scores whether the current fact is what search finds.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.ops import UNQUOTE_POLICY

NAMES = (
    "Alice", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas",
    "Kemal", "Lena", "Marco", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tara",
)  # fmt: skip


@dataclass(frozen=True)
class Slot:
    """A kind of fact a speaker has, with ways to state it, change it and ask about it."""

    name: str
    values: tuple[str, ...]
    first: tuple[str, ...]
    """Templates that state the fact for the first time (``{v}`` is the value)."""
    change: tuple[str, ...]
    """Templates that state a new value (``{v}`` new, ``{old}`` the earlier one)."""
    current: tuple[str, ...]
    """Questions about the current value (``{s}`` is the speaker)."""
    before: tuple[str, ...]
    """Questions about the earlier value (``{v}`` is the value that replaced it)."""


SLOTS = (
    Slot(
        "city",
        ("Lisbon", "Berlin", "Toronto", "Osaka", "Nairobi", "Melbourne", "Denver", "Krakow"),
        (
            "We finally settled in {v}, the flat is tiny but the light is great.",
            "I live in {v} these days, it took a while to get used to the trams.",
            "Since last spring home for me has been {v}.",
        ),
        (
            "Big news: we moved to {v}! Packing up everything in {old} was exhausting.",
            "I relocated to {v} last week, so no more {old} for me.",
            "Guess what, I left {old} and now I'm based in {v}.",
        ),
        ("Which city does {s} live in now?", "Where is {s} living at the moment?"),
        ("Where did {s} live before moving to {v}?",),
    ),
    Slot(
        "job",
        (
            "nurse",
            "software engineer",
            "bakery owner",
            "high school teacher",
            "architect",
            "data analyst",
            "paramedic",
            "graphic designer",
        ),
        (
            "Work is steady, I've been a {v} for a few years now.",
            "My job as a {v} keeps me busy most days.",
        ),
        (
            "I quit being a {old}; I started a new job as a {v} on Monday!",
            "Career change: I'm working as a {v} now instead of a {old}.",
            "After all those years as a {old}, I finally became a {v}.",
        ),
        ("What does {s} do for work now?", "What is {s}'s current job?"),
        ("What did {s} work as before switching to {v}?",),
    ),
    Slot(
        "pet",
        (
            "a beagle named Pepper",
            "a tabby cat called Miso",
            "a parrot named Kiwi",
            "a rabbit called Clover",
            "a golden retriever named Sunny",
            "a tortoise named Atlas",
        ),
        (
            "At home it's just me and {v}, who wakes me up at six.",
            "I adopted {v} from the shelter, best decision ever.",
        ),
        (
            "We adopted {v} this month; I still miss {old} so much.",
            "There's a new member of the family: {v}. It's been quiet since {old} passed.",
        ),
        ("What pet does {s} have now?", "Which animal lives with {s} at the moment?"),
        ("What pet did {s} have before {v}?",),
    ),
    Slot(
        "partner",
        ("Sam", "Noor", "Mateo", "Yuki", "Leah", "Tobias", "Amara", "Felix"),
        (
            "My partner {v} and I went hiking on Sunday.",
            "I've been seeing {v} for about a year, things are good.",
        ),
        (
            "{old} and I broke up; I'm dating {v} now and it feels right.",
            "I've started a relationship with {v}, after things ended with {old}.",
        ),
        ("Who is {s}'s partner now?", "Who is {s} dating currently?"),
        ("Who was {s} with before {v}?",),
    ),
    Slot(
        "hobby",
        (
            "pottery",
            "rock climbing",
            "playing the cello",
            "birdwatching",
            "salsa dancing",
            "chess",
            "sourdough baking",
            "trail running",
        ),
        (
            "My weekends are all about {v} lately.",
            "I picked up {v} and spend most evenings on it.",
        ),
        (
            "I dropped {old}; these days I'm hooked on {v}.",
            "New obsession: {v}. I haven't touched {old} in weeks.",
        ),
        ("What hobby is {s} into these days?", "What does {s} do for fun now?"),
        ("What hobby did {s} have before {v}?",),
    ),
    Slot(
        "phone",
        ("555-0134", "555-0178", "555-0112", "555-0199", "555-0147", "555-0163"),
        (
            "If you need me, my number is {v}.",
            "Save my phone number: {v}.",
        ),
        (
            "I got a new phone number, it's {v} now; {old} no longer works.",
            "Update your contacts: call me on {v}, not {old}.",
        ),
        ("What is {s}'s phone number now?", "How can someone call {s} today?"),
        ("What was {s}'s phone number before {v}?",),
    ),
    Slot(
        "car",
        (
            "a red Fiat Panda",
            "a blue Volvo estate",
            "a white Tesla Model 3",
            "an old Land Rover",
            "a green Mini Cooper",
            "a silver Toyota Prius",
        ),
        (
            "I drive {v}, it's not fancy but it never breaks down.",
            "The road trip was in {v}, my trusty car.",
        ),
        (
            "I sold {old} and bought {v} last weekend.",
            "My car is {v} now; {old} finally gave up.",
        ),
        ("What car does {s} drive now?", "Which car does {s} own these days?"),
        ("What car did {s} drive before {v}?",),
    ),
)
"""The facts a synthetic speaker can have."""

HELDOUT_SLOTS = (
    Slot(
        "employer",
        ("Siemens", "a small law firm", "the city council", "Spotify", "a hospital in town"),
        (
            "These days I spend my weekdays at {v}, the commute is fine.",
            "I'm on the payroll of {v}, have been for ages.",
        ),
        (
            "Handed in my notice! From next month I'm joining {v}.",
            "I work for {v} since the summer.",
            "New employer: {v}. The old place is behind me.",
        ),
        ("Where does {s} work?", "Who employs {s}?"),
        ("Where did {s} work prior to {v}?",),
    ),
    Slot(
        "diet",
        ("vegan", "vegetarian", "pescatarian", "on a keto diet", "eating everything again"),
        (
            "Food-wise I'm {v}, so restaurants can be tricky.",
            "Just so you know, I'm {v} when we go out.",
        ),
        (
            "Diet update: I'm {v} now.",
            "I stopped being {old}, I'm {v} these days.",
            "Turns out I feel better {v}, so that's my thing now.",
        ),
        ("What diet does {s} follow?", "How does {s} eat?"),
        ("What diet did {s} follow earlier, before {v}?",),
    ),
    Slot(
        "language",
        ("Japanese", "Portuguese", "Arabic", "Korean", "Dutch", "Swahili"),
        (
            "I'm taking evening classes in {v}, my grammar is awful.",
            "Learning {v} on an app every morning.",
        ),
        (
            "I gave up on {old}. I'm studying {v} instead.",
            "Switched languages: it's {v} lessons for me now.",
            "My new language project is {v}.",
        ),
        ("Which language is {s} learning?", "What language does {s} study?"),
        ("Which language was {s} learning previously, before {v}?",),
    ),
    Slot(
        "sport",
        ("tennis", "swimming", "boxing", "yoga", "cycling", "football"),
        (
            "I play {v} twice a week with friends.",
            "{v} is how I stay fit.",
        ),
        (
            "I don't do {old} anymore; {v} is my sport now.",
            "Took up {v} after my knee injury.",
            "It's all {v} for me since January.",
        ),
        ("What sport does {s} do?", "Which sport keeps {s} fit?"),
        ("What sport did {s} do before taking up {v}?",),
    ),
    Slot(
        "home",
        ("a houseboat", "a studio flat", "a farmhouse", "a shared house", "my parents' place"),
        (
            "I'm living in {v} right now, it suits me.",
            "Home is {v}, cosy but noisy.",
        ),
        (
            "We moved out of {old} and into {v}.",
            "Home is {v} now.",
            "Signed the lease on {v} yesterday!",
        ),
        ("What kind of home does {s} live in?", "Where does {s} stay?"),
        ("What kind of home did {s} live in before {v}?",),
    ),
    Slot(
        "band",
        ("Radiohead", "Beyonce", "Daft Punk", "the Beatles", "Taylor Swift", "Metallica"),
        (
            "I have {v} on repeat all the time.",
            "My favourite artist is {v}, no contest.",
        ),
        (
            "Honestly I'm over {old}; {v} is my favourite now.",
            "I can't stop listening to {v} lately.",
        ),
        ("Who is {s}'s favourite artist?", "What music does {s} love?"),
        ("Who was {s}'s favourite artist before {v}?",),
    ),
)
"""Facts and phrasings kept out of tuning: other kinds of facts, changes that often do not
name the old value, questions without "now"; used only to check that a ranking rule
generalises beyond :data:`SLOTS`."""

CHECK_SLOTS = (
    Slot(
        "instrument",
        ("the violin", "the drums", "the ukulele", "the saxophone", "the harp"),
        (
            "I practise {v} every evening, the neighbours are patient.",
            "Music-wise, {v} is my instrument.",
        ),
        (
            "Sold my old gear and bought {v}, learning from scratch.",
            "These days it's {v} I practise, not {old}.",
            "My teacher convinced me to try {v}, and I love it.",
        ),
        ("What instrument does {s} play?", "Which instrument is {s} practising?"),
        ("What instrument did {s} play before {v}?",),
    ),
    Slot(
        "school",
        ("a nursing degree", "a law course", "a pottery diploma", "a master's in history"),
        (
            "I'm enrolled in {v} at the evening college.",
            "Studying for {v} takes most of my free time.",
        ),
        (
            "I enrolled in {v} this autumn.",
            "Dropped out of {old}; {v} suits me much better.",
            "My studies changed direction, I'm doing {v}.",
        ),
        ("What is {s} studying?", "Which course is {s} taking?"),
        ("What was {s} studying before {v}?",),
    ),
    Slot(
        "commute",
        ("by bike", "by train", "on foot", "by scooter", "by bus"),
        (
            "I get to work {v}, it takes about half an hour.",
            "My commute is {v} every day.",
        ),
        (
            "I commute {v} since the new line opened.",
            "No more going {old}, I travel {v} these days.",
            "Started going to work {v} this month.",
        ),
        ("How does {s} get to work?", "How does {s} commute?"),
        ("How did {s} get to work before going {v}?",),
    ),
    Slot(
        "team",
        ("Arsenal", "the Lakers", "Juventus", "the Yankees", "Ajax"),
        (
            "I support {v}, I watch every match.",
            "Big fan of {v} since I was a kid.",
        ),
        (
            "I've switched allegiance to {v}, don't tell my dad.",
            "Cheering for {v} this season.",
            "My team is {v} after the move.",
        ),
        ("Which team does {s} support?", "Who does {s} cheer for?"),
        ("Which team did {s} support before {v}?",),
    ),
    Slot(
        "volunteering",
        ("the food bank", "an animal shelter", "the library", "a youth football club"),
        (
            "I volunteer at {v} on Saturdays.",
            "Every week I help out at {v}.",
        ),
        (
            "I help at {v} on weekends from this month on.",
            "Stopped going to {old}; I volunteer at {v} instead.",
            "Joined {v} as a volunteer.",
        ),
        ("Where does {s} volunteer?", "Where does {s} help out?"),
        ("Where did {s} volunteer before {v}?",),
    ),
    Slot(
        "drink",
        ("black coffee", "green tea", "oat lattes", "sparkling water"),
        (
            "I can't start the day without {v}.",
            "My usual order is {v}.",
        ),
        (
            "I cut out {old} and drink {v} these days.",
            "Morning routine: {v}, every single day.",
            "The doctor said to switch, so it's {v} for me.",
        ),
        ("What does {s} drink in the morning?", "What is {s}'s usual drink?"),
        ("What did {s} drink before {v}?",),
    ),
)
"""A third set, written after the ranking rule and its thresholds were fixed and never
used to choose anything: other facts again, changes worded with and without change words
("Cheering for {v} this season."), questions without "now". Its figures say how far the
rule generalises."""

FRESH_SLOTS = (
    Slot(
        "neighbourhood",
        ("the old town", "the harbour district", "a quiet suburb", "the university quarter"),
        (
            "Our flat is in {v}, close to everything.",
            "I rent a room in {v}, the rent is fair.",
        ),
        (
            "We packed up and left {old}; our address is in {v} from Monday.",
            "Got the keys to a place in {v}!",
            "Living in {v} is so much calmer than {old}.",
        ),
        ("Which part of town does {s} live in?", "Where is {s}'s flat?"),
        ("Which part of town did {s} live in before {v}?",),
    ),
    Slot(
        "role",
        ("a nurse", "a bus driver", "a software tester", "a baker", "a translator"),
        (
            "I work as {v}, long shifts but I like it.",
            "By profession I'm {v}.",
        ),
        (
            "Retrained over the winter and I'm {v} at last.",
            "Said goodbye to being {old}, I'm {v} today.",
            "First week as {v} went well.",
        ),
        ("What does {s} do for a living?", "What is {s}'s job?"),
        ("What was {s}'s job before becoming {v}?",),
    ),
    Slot(
        "pet",
        ("a tabby cat", "a parrot", "two rabbits", "a golden retriever", "a tortoise"),
        (
            "At home it's me and {v}.",
            "I look after {v}, they keep me company.",
        ),
        (
            "We rehomed {old} with my aunt and adopted {v}.",
            "Meet the newest family member: {v}.",
            "The house feels different with {v} around.",
        ),
        ("What pet does {s} keep?", "Which animal lives with {s}?"),
        ("What pet did {s} keep before {v}?",),
    ),
    Slot(
        "hobby",
        ("knitting", "bouldering", "birdwatching", "chess", "baking bread"),
        (
            "My weekends are all about {v}.",
            "I unwind with {v} after work.",
        ),
        (
            "Lost interest in {old}, {v} is what I do on weekends.",
            "Picked up {v} recently and I'm hooked.",
            "Weekends mean {v} for me at the moment.",
        ),
        ("What is {s}'s hobby?", "What does {s} do on weekends?"),
        ("What hobby did {s} have before {v}?",),
    ),
    Slot(
        "partner",
        ("Sam", "Alex", "Robin", "Jordan", "Kim"),
        (
            "My partner {v} and I have been together a while.",
            "I'm seeing {v}, we met at a friend's party.",
        ),
        (
            "{old} and I split up; I'm with {v} now.",
            "I've been dating {v} for a couple of months.",
            "{v} asked me out and I said yes.",
        ),
        ("Who is {s}'s partner?", "Who is {s} seeing?"),
        ("Who was {s} seeing before {v}?",),
    ),
    Slot(
        "phone",
        ("an old Nokia", "the latest iPhone", "a Pixel", "a Fairphone"),
        (
            "I text from {v}, it does the job.",
            "My phone is {v}.",
        ),
        (
            "Dropped {old} in the sea, so I got {v}.",
            "Upgraded to {v} on Friday.",
            "Using {v} at the moment, the battery is great.",
        ),
        ("What phone does {s} use?", "Which phone does {s} have?"),
        ("What phone did {s} use before {v}?",),
    ),
)
"""A fourth set, written after the check set had been looked at and before the chain and
question-type parts of the ranking rule and its present thresholds were chosen; its figures
were seen while rule designs were compared, never used to set a threshold. Changes are
worded in ways none of the other sets use ("Got the keys to a place in {v}!", "Meet the
newest family member: {v}.")."""

UNSEEN_SLOTS = (
    Slot(
        "gym",
        ("the climbing gym", "a boxing club", "the pool downtown", "a crossfit box"),
        (
            "I'm a member of {v}, I go three times a week.",
            "You can usually find me at {v} after work.",
        ),
        (
            "Cancelled my membership at {old} and signed up at {v}.",
            "I train at {v} now, it's closer to the office.",
            "First session at {v} today, my arms are dead.",
        ),
        ("Which gym does {s} go to?", "Where does {s} train?"),
        ("Where did {s} train before {v}?",),
    ),
    Slot(
        "car",
        ("a red Fiat", "an electric Kia", "a vintage Beetle", "a camper van"),
        (
            "I drive {v}, it's not fancy but it works.",
            "My car is {v}.",
        ),
        (
            "Traded in {old} for {v}.",
            "The new car is {v}, I love it.",
            "Picked up {v} from the dealer this morning.",
        ),
        ("What car does {s} drive?", "Which car is {s}'s?"),
        ("What car did {s} drive before {v}?",),
    ),
    Slot(
        "book_club",
        (
            "a crime fiction club",
            "a poetry circle",
            "a sci-fi book club",
            "a history reading group",
        ),
        (
            "Once a month I meet with {v}.",
            "I belong to {v}, we argue a lot.",
        ),
        (
            "I left {old}; these days I go to {v}.",
            "Started attending {v} at the library.",
            "{v} meets on Thursdays and I never miss it.",
        ),
        ("Which reading group does {s} attend?", "What book club is {s} in?"),
        ("Which reading group did {s} attend before {v}?",),
    ),
    Slot(
        "bank",
        ("a local credit union", "an online bank", "the big national bank"),
        (
            "My money is with {v}.",
            "I bank with {v}, the app is okay.",
        ),
        (
            "Moved all my accounts to {v}.",
            "Closed my account at {old}, I'm with {v} now.",
            "Opened an account at {v}, the fees are lower.",
        ),
        ("Which bank does {s} use?", "Where does {s} bank?"),
        ("Which bank did {s} use before {v}?",),
    ),
    Slot(
        "shift",
        ("the night shift", "early mornings", "a four-day week", "weekends only"),
        (
            "I work {v}, it messes with my sleep.",
            "My schedule is {v}.",
        ),
        (
            "My boss put me on {v}.",
            "No more {old}, I'm on {v} from now on.",
            "I asked HR and got {v}.",
        ),
        ("What schedule does {s} work?", "Which shift is {s} on?"),
        ("What schedule did {s} work before {v}?",),
    ),
    Slot(
        "coffee_place",
        ("the corner cafe", "a Turkish bakery", "the station kiosk", "a fancy roastery"),
        (
            "I get my morning coffee at {v}.",
            "{v} makes my coffee every day.",
        ),
        (
            "Found a better spot: {v}.",
            "The barista at {v} knows my order by now.",
            "I stopped going to {old}, it's {v} for coffee these days.",
        ),
        ("Where does {s} buy coffee?", "Which cafe does {s} go to?"),
        ("Where did {s} buy coffee before {v}?",),
    ),
)
"""A fifth set, written after the present ranking rule and its thresholds were fixed and
measured once: it chose nothing. Most of its changes carry no change word ("Picked up {v}
from the dealer this morning.", "I asked HR and got {v}.")."""

SEALED_SLOTS = (
    Slot(
        "dentist",
        ("Dr. Okafor", "Dr. Lindqvist", "Dr. Moreau", "Dr. Haddad"),
        (
            "My dentist is {v}, thankfully very gentle.",
            "I've had {v} looking after my teeth for years.",
        ),
        (
            "Had my first appointment with {v} today, way less scary than I expected.",
            "Got a filling from {v} this morning and barely felt a thing!",
            "{old} retired, so {v} looks after my teeth.",
            "Registered with {v} at the practice round the corner.",
        ),
        ("Who is {s}'s dentist?", "Which dentist does {s} see?"),
        ("Who was {s}'s dentist before {v}?",),
    ),
    Slot(
        "streaming",
        ("Netflix", "Disney+", "Apple TV+", "Mubi", "Paramount+"),
        (
            "We pay for {v}, it's our only subscription.",
            "Most nights I fall asleep to something on {v}.",
        ),
        (
            "Got a {v} subscription for my birthday, so many films to catch up on!",
            "Free trial of {v} turned into a paid plan, oops.",
            "{old} put its prices up again, so it's {v} for us from this month.",
            "Our TV login is for {v} these days.",
        ),
        (
            "Which streaming service does {s} subscribe to?",
            "What streaming service does {s} pay for?",
        ),
        ("Which streaming service did {s} use before {v}?",),
    ),
    Slot(
        "hairdresser",
        (
            "a salon on Market Street",
            "a barber by the station",
            "the salon above the florist",
            "a tiny place in the arcade",
        ),
        (
            "I get my hair cut at {v}, they never rush me.",
            "For haircuts it's always {v}, good gossip included.",
        ),
        (
            "Look at this fringe, courtesy of {v}!",
            "Booked my next cut at {v} already, they did a great job.",
            "Tried {v} on Saturday and I'm never going back to {old}.",
            "My old hairdresser closed down, so I found {v}.",
        ),
        ("Where does {s} get a haircut?", "Who cuts {s}'s hair?"),
        ("Where did {s} get a haircut before {v}?",),
    ),
    Slot(
        "broadband",
        ("Vodafone", "a local fibre company", "Virgin Media", "Sky"),
        (
            "Our internet comes from {v}, mostly reliable.",
            "We get broadband through {v}.",
        ),
        (
            "The engineer from {v} set up the router this morning.",
            "Fibre at last: connected by {v} yesterday!",
            "Three outages in a week with {old}, so the contract went to {v}.",
            "Our broadband bill comes from {v} since the spring.",
        ),
        ("Which broadband provider does {s} use?", "Who provides {s}'s internet?"),
        ("Which broadband provider did {s} use before {v}?",),
    ),
    Slot(
        "flatmate",
        ("Jules", "Priyanka", "an exchange student from Chile", "my old schoolfriend Ben"),
        (
            "My flatmate is {v}, who cooks amazing curries.",
            "I share the flat with {v}, we split the bills.",
        ),
        (
            "Helped {v} carry boxes up to the spare room on Sunday, the flat feels full again.",
            "New face at the breakfast table: {v}.",
            "Said goodbye to {old} at the station; {v} has the spare room from Friday.",
            "The spare room went to {v} after {old} moved out.",
        ),
        ("Who is {s}'s flatmate?", "Who is {s}'s housemate?"),
        ("Who was {s}'s flatmate before {v}?",),
    ),
    Slot(
        "running_route",
        (
            "the canal towpath",
            "the loop round the park",
            "the coastal path",
            "the old railway line",
        ),
        (
            "My regular run is {v}, about eight kilometres.",
            "Most mornings I jog along {v}.",
        ),
        (
            "Ran {v} at sunrise today, what a view!",
            "Discovered {v} last week, my legs hate it but I love it.",
            "With {old} closed for roadworks, I run {v} these days.",
            "Five kilometres along {v} this morning, personal best!",
        ),
        ("Where does {s} go running?", "What is {s}'s running route?"),
        ("Where did {s} go running before {v}?",),
    ),
)
"""A sixth set, written before the next ranking change was designed and sealed until that
change was fixed; measured once: it chose nothing. Other facts again; most changes name an
event that implies the new value rather than using a change word, and most do not name the
old value."""

FILLER = (
    "How was your weekend?",
    "Pretty relaxed, I mostly stayed in and read.",
    "The weather has been so grey lately.",
    "I tried that new noodle place downtown, not bad at all.",
    "Have you watched anything good recently?",
    "I binged a detective series, couldn't stop.",
    "Work has been hectic but I'm managing.",
    "That sounds lovely, I'm glad you had a good time.",
    "Haha, that's so typical!",
    "I've been trying to sleep earlier, with mixed results.",
    "My sister visited and we cooked all day.",
    "I need a holiday soon, honestly.",
    "Did you see the game last night?",
    "No, I missed it, was it any good?",
    "I'm reading a novel about a lighthouse keeper.",
    "Let's grab coffee next time you're free.",
    "The traffic this morning was unbelievable.",
    "I finally cleaned out my closet.",
    "That's great to hear!",
    "Oh wow, tell me more.",
    "I'm so happy for you.",
    "We should plan a picnic when it's warmer.",
    "I've been listening to a lot of jazz.",
    "My neighbour's garden looks amazing this year.",
)

REPLIES = (
    "Oh wow, that's a big change!",
    "Nice, good for you.",
    "Really? I didn't see that coming.",
    "That sounds exciting, congrats!",
    "How do you feel about it?",
)

_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


def _fact_plan(
    rng: random.Random,
    speakers: tuple[str, str],
    sessions: int,
    facts: int,
    slots: Sequence[Slot] = SLOTS,
) -> list[tuple[int, str, Slot, list[str]]]:
    """``(session, speaker, slot, values in order)`` for each fact a speaker has."""
    plan = []
    pairs = [(sp, slot) for sp in speakers for slot in slots]
    for speaker, slot in rng.sample(pairs, min(facts, len(pairs))):
        n_values = rng.choice((1, 2, 2, 3))
        plan.append((rng.randrange(sessions), speaker, slot, rng.sample(slot.values, n_values)))
    return plan


def generate_one(
    rng: random.Random,
    sample_id: str,
    *,
    turns: int = 150,
    sessions: int = 6,
    facts: int = 8,
    slots: Sequence[Slot] = SLOTS,
) -> dict[str, Any]:
    """One conversation in the LoCoMo format (see :func:`generate`)."""
    speakers = (rng.choice(NAMES[:10]), rng.choice(NAMES[10:]))
    per_session = [turns // sessions + (1 if s < turns % sessions else 0) for s in range(sessions)]
    # Each value of each fact goes to a session (non-decreasing), then to a turn slot.
    events: dict[int, list[tuple[str, Slot, int, list[str]]]] = {s: [] for s in range(sessions)}
    for start, speaker, slot, values in _fact_plan(rng, speakers, sessions, facts, slots):
        session = min(start, sessions - len(values))
        for i in range(len(values)):
            events[session].append((speaker, slot, i, values))
            if i + 1 < len(values):  # leave a later session for each value still to come
                session = rng.randrange(session + 1, sessions - (len(values) - i - 2))
    # (speaker, slot name) -> (slot, [(dia_id, value), ...] in the order they were said)
    statements: dict[tuple[str, str], tuple[Slot, list[tuple[str, str]]]] = {}
    conversation: dict[str, Any] = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
    date = datetime(2023, 1, 1, 9, 0, tzinfo=timezone.utc) + timedelta(days=rng.randrange(60))
    for s in range(sessions):
        n = per_session[s]
        todo = sorted(events[s], key=lambda e: e[2])  # first statements before changes
        # A fact takes two turns (statement + reply); spread them over the session.
        starts = sorted(rng.sample(range(0, max(1, n - 1), 2), min(len(todo), n // 2)))
        at = dict(zip(starts, todo, strict=False))
        session_turns: list[dict[str, str]] = []
        j = 0
        while j < n:
            dia = f"D{s + 1}:{j + 1}"
            if j in at and j + 1 < n:
                speaker, slot, i, values = at[j]
                if i == 0:
                    text = rng.choice(slot.first).format(v=values[0])
                else:
                    text = rng.choice(slot.change).format(v=values[i], old=values[i - 1])
                said = statements.setdefault((speaker, slot.name), (slot, []))[1]
                said.append((dia, values[i]))
                other = speakers[1] if speaker == speakers[0] else speakers[0]
                session_turns.append({"speaker": speaker, "dia_id": dia, "text": text})
                session_turns.append(
                    {"speaker": other, "dia_id": f"D{s + 1}:{j + 2}", "text": rng.choice(REPLIES)}
                )
                j += 2
                continue
            speaker = speakers[j % 2]
            session_turns.append({"speaker": speaker, "dia_id": dia, "text": rng.choice(FILLER)})
            j += 1
        conversation[f"session_{s + 1}_date_time"] = date.strftime(_DATE_FORMAT)
        conversation[f"session_{s + 1}"] = session_turns
        date += timedelta(days=rng.randint(5, 40), minutes=rng.randrange(600))
    qa: list[dict[str, Any]] = []
    for (speaker, _), (slot, said) in statements.items():
        dias = [d for d, _ in said]
        qa.append(
            {
                "question": rng.choice(slot.current).format(s=speaker),
                "answer": said[-1][1],
                "evidence": [dias[-1]],
                "category": 4,
                "fact": {"kind": "current", "slot": slot.name, "stale": dias[:-1]},
            }
        )
        if len(dias) > 1:
            qa.append(
                {
                    "question": rng.choice(slot.before).format(s=speaker, v=said[-1][1]),
                    "answer": said[-2][1],
                    "evidence": [dias[-2]],
                    "category": 2,
                    "fact": {"kind": "before", "slot": slot.name, "stale": []},
                }
            )
    return {"sample_id": sample_id, "conversation": conversation, "qa": qa}


def generate(
    n: int = 3,
    *,
    seed: int = 0,
    turns: int = 150,
    sessions: int = 6,
    facts: int = 8,
    slots: Sequence[Slot] = SLOTS,
) -> list[dict[str, Any]]:
    """Seeded LoCoMo-format conversations in which speakers' facts change.

    Args:
        n: How many conversations.
        seed: Same seed, same conversations.
        turns: Turns per conversation.
        sessions: Dated sessions per conversation.
        facts: Facts (speaker, slot) per conversation; about half change once or twice.
        slots: The kinds of facts and their phrasings (:data:`HELDOUT_SLOTS`,
            :data:`CHECK_SLOTS`, :data:`FRESH_SLOTS`, :data:`UNSEEN_SLOTS` or
            :data:`SEALED_SLOTS` for a check apart from the ones a ranking was tuned on).

    Each ``qa`` entry has LoCoMo's keys plus ``fact``: ``kind`` (``"current"`` or
    ``"before"``), ``slot`` and ``stale`` (ids of earlier statements of the same fact).
    """
    for name, value, low in (("n", n, 1), ("turns", turns, 20), ("sessions", sessions, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InvalidInputError(f"{name} must be an int >= {low}, got {value!r}")
    if turns < 8 * sessions:
        raise InvalidInputError(
            f"turns ({turns}) must be at least 8 per session ({sessions} sessions); "
            "pass more turns or fewer sessions"
        )
    rng = random.Random(seed)
    return [
        generate_one(
            rng, f"facts-{seed}-{i}", turns=turns, sessions=sessions, facts=facts, slots=slots
        )
        for i in range(n)
    ]


def write(path: str | os.PathLike[str], data: Sequence[dict[str, Any]]) -> Path:
    """Write conversations as a LoCoMo JSON file."""
    out = Path(path)
    out.write_text(json.dumps(list(data), indent=1), encoding="utf-8")
    return out


@dataclass
class FactScores:
    """How one policy keeps up with changing facts (means over conversations)."""

    policy: str
    capacity: str
    questions: int = 0
    hits1: int = 0
    hits5: int = 0
    changed: int = 0
    """Current-fact questions whose fact changed at least once."""
    stale_above: int = 0
    """Of those, how many times an earlier statement ranked above the current one."""
    before_questions: int = 0
    before_hits5: int = 0
    ops: dict[str, int] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """The scores as one table row."""
        return {
            "policy": self.policy,
            "capacity": self.capacity,
            "recall@1": self.hits1 / max(1, self.questions),
            "recall@5": self.hits5 / max(1, self.questions),
            "stale_above": self.stale_above / max(1, self.changed),
            "before_recall@5": self.before_hits5 / max(1, self.before_questions),
            **{k: self.ops.get(k, 0) for k in ("add", "update", "delete", "noop")},
        }


def measure_fact_change(
    data: Sequence[dict[str, Any]],
    policies: Sequence[str],
    *,
    budget: float = 0.25,
    embeddings: Embeddings | None = None,
    k: int = 5,
    learned_path: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """Run each policy through ``AgentMemory`` on ``data`` and score current-fact questions.

    Every turn is offered with ``add`` (the session's date as timestamp, the speaker in
    the metadata, as ``agentmem bench locomo`` stores turns) to a fresh memory
    on a temporary SQLite file; then each question is asked with the default hybrid
    ``search``. A hit is a returned record whose text is the evidence turn's text (an
    UPDATE keeps the record id but takes the new text, so texts, not ids, say what memory
    holds).

    Args:
        data: Conversations from :func:`generate` (LoCoMo format with ``fact`` on each qa).
        policies: Policy names; ``keep_all`` runs without a capacity.
        budget: Capacity as a share of each conversation's turns.
        embeddings: The embedding model (default: the bundled one).
        k: Records retrieved per question.
        learned_path: Folder of the network ``learned`` runs (``None``: the shipped one).

    Returns:
        One row per policy: ``recall@1`` and ``recall@{k}`` of the current fact,
        ``stale_above`` (share of changed facts where an earlier statement ranks above the
        current one, or is found while the current one is not), ``before_recall@{k}`` and
        op counts from the audit log.
    """
    from langchain_agentmem.embeddings import resolve_embeddings
    from langchain_agentmem.index.text import reply_texts
    from langchain_agentmem.locomo import load_locomo, turn_metadata, turn_text
    from langchain_agentmem.memory import AgentMemory
    from langchain_agentmem.policies.learned import LearnedPolicy
    from langchain_agentmem.rl.budget import capacity_for

    emb = resolve_embeddings(embeddings)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        file = write(Path(tmp) / "facts.json", data)
        convs, _ = load_locomo(file)
        facts = {str(s["sample_id"]): [q["fact"] for q in s["qa"]] for s in data}
        for name in policies:
            scores = FactScores(name, "-")
            caps = []
            for c_i, conv in enumerate(convs):
                cap = None if name == "keep_all" else capacity_for(budget, len(conv.turns))
                caps.append(str(cap) if cap else "all")
                text_of = {t.dia_id: turn_text(t) for t in conv.turns}
                url = f"sqlite:///{Path(tmp) / f'{name}-{c_i}.db'}"
                replies = reply_texts(
                    [t.speaker for t in conv.turns],
                    [t.session for t in conv.turns],
                    [text_of[t.dia_id] for t in conv.turns],
                )
                policy: Any = name
                if name == "learned" and learned_path is not None and cap is not None:
                    policy = LearnedPolicy(cap, path=learned_path)
                with AgentMemory(url, embeddings=emb, policy=policy, capacity=cap) as mem:
                    ns = "facts"
                    for t, reply in zip(conv.turns, replies, strict=True):
                        mem.add(
                            text_of[t.dia_id],
                            namespace=ns,
                            thread=f"session-{t.session}",
                            timestamp=t.date,
                            record_id=f"{conv.sample_id}:{t.dia_id}",
                            metadata=turn_metadata(t, reply),
                        )
                    for d in mem.decisions(ns):
                        if d.policy == UNQUOTE_POLICY:
                            continue  # a copy dropped with what it quoted: no decision
                        key = d.kind.value.lower()
                        scores.ops[key] = scores.ops.get(key, 0) + 1
                    for q, fact in zip(conv.questions, facts[conv.sample_id], strict=True):
                        found = [r.text for r in mem.search(q.question, namespace=ns, k=k)]
                        current = text_of[q.evidence[0]]
                        pos = found.index(current) if current in found else k
                        if fact["kind"] == "before":
                            scores.before_questions += 1
                            scores.before_hits5 += pos < k
                            continue
                        scores.questions += 1
                        scores.hits1 += pos == 0
                        scores.hits5 += pos < k
                        if fact["stale"]:
                            scores.changed += 1
                            stale = {text_of[d] for d in fact["stale"]}
                            scores.stale_above += any(t in stale for t in found[:pos])
            scores.capacity = "/".join(sorted(set(caps), key=caps.index))
            rows.append(scores.row())
    return rows


def format_table(rows: Sequence[dict[str, Any]], k: int = 5) -> str:
    """Rows of :func:`measure_fact_change` as a fixed-width text table."""
    head = (
        f"{'policy':<17} {'capacity':<12} {'cur@1':>6} {'cur@' + str(k):>6} {'stale>cur':>9} "
        f"{'before@' + str(k):>9} {'ADD':>5} {'UPDATE':>6} {'DELETE':>6} {'NOOP':>5}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['policy']:<17} {r['capacity']:<12} {r['recall@1']:>6.3f} {r['recall@5']:>6.3f} "
            f"{r['stale_above']:>9.3f} {r['before_recall@5']:>9.3f} {r['add']:>5} "
            f"{r['update']:>6} {r['delete']:>6} {r['noop']:>5}"
        )
    return "\n".join(lines)


SLOT_SETS = {
    "tuned": SLOTS,
    "heldout": HELDOUT_SLOTS,
    "check": CHECK_SLOTS,
    "fresh": FRESH_SLOTS,
    "unseen": UNSEEN_SLOTS,
    "sealed": SEALED_SLOTS,
}
"""Each set of facts and phrasings by the name ``--slots`` takes."""

ALL_POLICIES = (
    "keep_all", "fifo", "lru", "random", "importance", "novelty", "forgetting_curve", "learned",
)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m langchain_agentmem.rl.synthetic --out FILE``: measure every policy."""
    import argparse
    import sys
    import time

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=3, help="conversations")
    parser.add_argument("--turns", type=int, default=150, help="turns per conversation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=0.25)
    parser.add_argument("--policies", default=",".join(ALL_POLICIES))
    parser.add_argument(
        "--slots",
        default="tuned",
        help=f"the facts and phrasings, one of {', '.join(SLOT_SETS)} or several joined by "
        "commas (the i-th set takes seed + i): the ones rankings were tuned on, the held-out "
        "ones, the check set written after the first ranking rule was fixed, the fresh set "
        "written before its present thresholds were chosen, the unseen set written after, or "
        "the sealed set written before the next ranking change was designed",
    )
    parser.add_argument("--out", help="text file for the table (default: print only)")
    parser.add_argument(
        "--learned-path", help="folder of the network 'learned' runs (default: the shipped one)"
    )
    parser.add_argument(
        "--write",
        help="write the conversations to this LoCoMo-format file and stop (no measurement)",
    )
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.slots.split(",")]
    unknown = [name for name in names if name not in SLOT_SETS]
    if unknown:
        parser.error(f"unknown --slots {unknown}; choose from {', '.join(SLOT_SETS)}")
    data = [
        conv
        for i, name in enumerate(names)
        for conv in generate(args.n, seed=args.seed + i, turns=args.turns, slots=SLOT_SETS[name])
    ]
    if args.write:
        print(f"wrote {len(data)} conversations to {write(args.write, data)}")
        return
    t0 = time.perf_counter()
    rows = measure_fact_change(
        data, args.policies.split(","), budget=args.budget, learned_path=args.learned_path
    )
    table = format_table(rows)
    print(table)
    if args.out:
        n_q = sum(q["fact"]["kind"] == "current" for s in data for q in s["qa"])
        n_b = sum(q["fact"]["kind"] == "before" for s in data for q in s["qa"])
        cmd = "python -m langchain_agentmem.rl.synthetic " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        Path(args.out).write_text(
            f"{cmd}\n\n{args.n} synthetic conversations ({args.slots} facts and phrasings, "
            f"seed {args.seed}, {args.turns} turns, "
            f"6 sessions), {n_q} current-fact and {n_b} 'before' questions; capacity = "
            f"round({args.budget} x turns) per conversation; default hybrid search, k=5.\n"
            "cur@k: the latest statement of the fact is in the top k. stale>cur: share of "
            "changed facts where an earlier statement ranks above the current one (or is in the "
            "top 5 while the current one is not). before@5: "
            "'before ...' questions find the earlier statement. Op counts from the audit "
            f"log, all conversations. Ran in {time.perf_counter() - t0:.0f} s.\n\n"
            f"{table}\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
