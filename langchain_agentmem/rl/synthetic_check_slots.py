"""Sets of facts and phrasings written after the ranking rules were tuned, each to check how
far they generalise; none was used to set a threshold."""

from __future__ import annotations

from langchain_agentmem.rl.synthetic_slots import Slot

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
