"""The kinds of facts a synthetic speaker has, with the phrasings that state, change and ask
about them: the set rankings were tuned on (:data:`SLOTS`) and the set held out from tuning
(:data:`HELDOUT_SLOTS`)."""

from __future__ import annotations

from dataclasses import dataclass


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
