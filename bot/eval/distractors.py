"""A deterministic distractor corpus for `eventbot bench`: plain-text news-like documents that the bundled
article can hide among, so retrieval and answering are measured at thousands of chunks.

The text is made from sentence templates filled from the word lists below (places, people, organisations,
events across local politics, business, weather, science, culture, transport and sports other than the
article's). Nothing is downloaded; document `i` of seed `s` is the same on every machine and for every corpus
size, so a small corpus is the first documents of a large one. No document names the article's people or its
sport (see `FORBIDDEN`), so the article's answers stay checkable among them.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

# Words the article's facts turn on: none may appear in a distractor (checked on every document written).
FORBIDDEN = re.compile(r"sakamoto|\bliu\b|glenn|kaori|alysa|\bamber\b|skat|tiktok|olympi|blade angels", re.I)

FIRST_NAMES = """Aaron Abigail Adrian Aisha Alan Alice Amara Andre Anika Arjun Beatrice Benedikt Bruno Camille
Carlos Chiara Clara Colin Dalia Daniel Dario Delphine Dmitri Edith Elena Emeka Enzo Esther Fatima Felix Fiona
Florian Gabriel Greta Hamid Hannah Hugo Ines Ingrid Isaac Ivan Jana Jonas Joris Julia Karim Katarzyna Lars Leila
Lena Lorenzo Lucia Magnus Malik Marek Marta Mateo Miriam Nadia Nikolai Nora Olga Omar Oscar Paula Pedro Petra Rafael
Rania Rosa Samuel Sara Sebastian Selma Simon Sofia Stefan Tariq Teresa Tomas Ursula Valentina Viktor Wanda Yusuf
Zofia""".split()  # noqa: SIM905 (a list literal of 86 names reads worse)

SURNAMES = """Abbott Achterberg Adeyemi Alvarez Andersson Bauer Becker Bianchi Brennan Castillo Costa Dahl Delacroix
Dimitrov Dubois Eriksen Esposito Falk Ferreira Fischer Fontaine Garcia Gruber Haddad Halvorsen Hartmann Ibrahim
Ivanova Jansen Jovanovic Kaminski Keller Kowalski Kruger Lambert Larsen Lindqvist Lopez Marchetti Martins Meyer
Moreau Nakamura Navarro Nielsen Novak Okafor Oliveira Ortega Petrov Pham Quinn Ramos Reyes Ricci Rossi Santos
Schmidt Silva Sokolov Svensson Tanaka Torres Ulrich Vasquez Vogel Walsh Weber Wojcik Yilmaz Zeller Zhang
Ziegler""".split()  # noqa: SIM905

CITIES = """Aldmere, Brackenford, Caldwater, Dunmoor, Eastholm, Fernhaven, Glenrock, Harrowgate, Ironbridge,
Juniper Falls, Kestrel Bay, Larkspur, Millbrook, Northwick, Oakhollow, Pinecrest, Queensferry, Redcliff, Stonehaven,
Thornbury, Upperton, Valemont, Westmarch, Yarrow Point, Ashby, Bellhaven, Corran, Drayford, Elmstead, Foxley,
Greywater, Hollins, Kingsmere, Lowick, Marlow Heights, Newbury Springs, Ormond, Portsea, Ravensdale, Saltmarsh,
Tidewell, Underhill, Wexcombe, Brightwater, Coldharbour""".replace("\n", " ").split(", ")

REGIONS = [
    "the northern province",
    "the coastal region",
    "the river valley",
    "the eastern district",
    "the highlands",
    "the southern counties",
    "the lake district",
    "the western plains",
]
ORGS = [
    "the city council",
    "the regional transport authority",
    "the water board",
    "the chamber of commerce",
    "the university hospital",
    "the housing association",
    "the port authority",
    "the parks department",
    "the teachers' union",
    "the public library service",
    "the energy regulator",
    "the fire service",
]
COMPANIES = [
    "Northwind Logistics",
    "Harbor Foods",
    "Copperline Energy",
    "Bluefield Pharma",
    "Granite Mobile",
    "Silverleaf Bank",
    "Meridian Motors",
    "Orchard Retail",
    "Keystone Steel",
    "Lumen Software",
    "Tidal Shipping",
    "Evergreen Paper",
    "Atlas Airlines",
    "Summit Insurance",
    "Prairie Grain",
]
PRODUCTS = [
    "electric buses",
    "frozen meals",
    "solar panels",
    "hearing aids",
    "budget phones",
    "farm machinery",
    "cargo drones",
    "heat pumps",
    "bicycles",
    "water filters",
    "office furniture",
    "medical scanners",
]
PROJECTS = [
    "the new tram line",
    "the harbour bridge repair",
    "the flood barrier",
    "the school extension",
    "the bypass road",
    "the district heating network",
    "the riverside park",
    "the central station upgrade",
    "the recycling plant",
    "the cycle path network",
    "the hospital wing",
    "the market hall renovation",
]
SPORTS = [
    ("rowing", "single sculls"),
    ("cycling", "road race"),
    ("swimming", "200 metres freestyle"),
    ("athletics", "10,000 metres"),
    ("judo", "middleweight final"),
    ("fencing", "team sabre"),
    ("badminton", "mixed doubles"),
    ("canoeing", "slalom"),
    ("archery", "recurve final"),
    ("table tennis", "team final"),
    ("triathlon", "sprint race"),
    ("climbing", "bouldering final"),
]
CLUBS = ["Rovers", "United", "Athletic", "Wanderers", "Harriers", "City", "Albion", "Rangers"]
MEDALS = ["gold", "silver", "bronze"]
WEATHER = [
    "heavy rain",
    "strong winds",
    "a late frost",
    "a long heatwave",
    "thick fog",
    "hailstorms",
    "an early snowfall",
    "a dry spell",
]
FIELDS = [
    "marine biology",
    "astronomy",
    "soil science",
    "battery chemistry",
    "archaeology",
    "genetics",
    "climate modelling",
    "materials science",
    "neuroscience",
    "volcanology",
]
FINDS = [
    "a colony of rare seabirds",
    "the remains of a Roman villa",
    "a faint companion star",
    "a bacterium that digests plastic",
    "a new species of freshwater snail",
    "traces of an ancient river",
    "a cheaper catalyst for hydrogen",
    "a gene linked to drought tolerance",
    "a buried medieval chapel",
]
ARTS = [
    "an exhibition of early photographs",
    "a season of chamber music",
    "a festival of street theatre",
    "a retrospective of the painter's work",
    "a programme of silent films",
    "a poetry prize",
    "a restored organ",
    "a collection of folk costumes",
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ROLES = {
    "council": ["mayor", "deputy mayor", "council leader", "planning officer"],
    "business": ["chief executive", "finance director", "chair", "head of operations"],
    "weather": ["chief forecaster", "head of emergency planning", "spokesperson"],
    "science": ["professor", "lead researcher", "geologist", "laboratory director"],
    "culture": ["museum director", "festival director", "programme manager"],
    "transport": ["operations director", "spokesperson", "chief engineer"],
    "sports": ["head coach", "team manager", "club captain"],
}

TOPICS: dict[str, list[str]] = {
    "council": [
        "{City} {org_} voted {n2} to {n3} on {day} to approve funding for {project}.",
        "The plan, costed at {money} million, had been delayed for {n1} years by disputes over land.",
        '{Person}, the {role}, said the vote was "a long overdue decision for the people of {city}".',
        "Opponents argued that {project} would raise local taxes by {pct} percent over the next decade.",
        "Work on {project} is expected to begin in {month} and to take about {n1} years.",
        "Residents packed the public gallery, and several speakers asked for a referendum on the scheme.",
        "{Person2} of {org} warned that costs on similar schemes in {region} had doubled.",
        "The council also agreed to review parking charges in the town centre after complaints from traders.",
        "A consultation last year drew {big} responses, the largest number the council has ever received.",
        "Under the agreement, {company} will operate the service for an initial period of {n1} years.",
    ],
    "business": [
        "{Company} reported a {pct} percent rise in quarterly revenue on {day}, beating analysts' forecasts.",
        "The company said strong demand for its {product} in {region} offset higher energy costs.",
        "Shares in {Company} rose {small} percent in early trading before settling slightly lower.",
        "{Person}, the {role} of {Company}, told investors that the firm would open a new plant near {city}.",
        "The new plant is expected to employ about {big} people when it reaches full output in {year}.",
        "Analysts at {company2} said margins remained under pressure from rising wages and freight costs.",
        "The company cut its full-year profit outlook in {month}, citing weaker sales of {product}.",
        "{Person2} said the results showed that the restructuring announced last year was working.",
        "Unions welcomed the investment but asked for guarantees on working conditions at the {city} site.",
        "{Company} also announced a share buyback worth {money} million over the next {n1} years.",
    ],
    "weather": [
        "{Weather} swept across {region} on {day}, closing roads and cutting power to {big} homes.",
        "Forecasters said the conditions around {city} were the worst recorded in {month} for {n2} years.",
        "Emergency crews cleared fallen trees from the main road between {city} and {city2} overnight.",
        "{Person}, the {role} of {org}, urged residents to avoid unnecessary journeys until the weekend.",
        "Farmers in {region} said the weather had already damaged up to {pct} percent of the harvest.",
        "Schools in {city} stayed closed on {day} while engineers checked buildings for damage.",
        "Rail services resumed in the afternoon, although delays of up to {n2} minutes continued.",
        "The weather service issued a yellow warning for the coast, the second this {month}.",
        "Volunteers handed out blankets and hot food at the community centre in {city2}.",
        "{Person2} said insurers expected claims to exceed {money} million across the region.",
    ],
    "science": [
        "Researchers in {field} at the university in {city} have reported {find}.",
        "The team, led by {Person}, published its findings in a peer-reviewed journal on {day}.",
        "{Person} said the discovery had taken {n1} years of fieldwork and careful analysis.",
        "The study combined samples from {n2} sites in {region} with data gathered by satellites.",
        "Other scientists cautioned that the result would need to be confirmed by an independent group.",
        '{Person2}, a {role} who was not involved in the work, called it "a genuinely surprising result".',
        "The project received {money} million in public funding and involved {n2} institutions.",
        "The researchers now plan a second expedition to {region} in {month} of next year.",
        "Samples from the site will be displayed at the natural history museum in {city2}.",
        "The team said about {pct} percent of the measurements matched the predictions of earlier models.",
    ],
    "culture": [
        "The museum in {city} opens {art} on {day}, the first such show in {region} for {n2} years.",
        "Curator {Person} said the works had been gathered from {n2} private collections.",
        "Tickets for the opening weekend sold out within {n1} days, the museum said.",
        "The programme was funded partly by {Company}, which has sponsored the venue since {year}.",
        "{Person2}, the {role}, said the aim was to bring younger audiences back to the galleries.",
        "Critics praised the lighting and the catalogue, though some found the rooms overcrowded.",
        "The show runs until {month} before travelling to {city2} and then abroad.",
        "Entry is free for visitors under {n2}, and late openings are planned every {day}.",
        "About {big} people visited in the first week, according to figures released by the museum.",
        "A series of talks accompanies {art}, with guests from universities across {region}.",
    ],
    "transport": [
        "Passengers on the line between {city} and {city2} faced delays of up to {n2} minutes on {day}.",
        "{Org} blamed a signalling fault near the junction outside {city2}.",
        "{Person}, the {role}, apologised and said engineers had worked through the night on the fault.",
        "The operator plans to replace {n2} trains on the route with {product} by {year}.",
        "Ticket prices on the route will rise by {pct} percent in {month}, the operator confirmed.",
        "Commuter groups said reliability had fallen for the third year in a row.",
        "{Person2} said the new timetable would add {n1} extra services at peak times.",
        "The airport at {city} reported {big} passengers last month, a record for {month}.",
        "A new cycle lane linking the station to the business park is due to open in {month}.",
        "Bus companies in {region} said driver shortages had forced them to cut rural routes.",
    ],
    "sports": [
        "{Person} won the {medal} medal in the {event} at the {region_cap} championships in {city} on {day}.",
        "The {age}-year-old finished {secs} seconds ahead of {Person2}, who took the {medal2} medal.",
        "It was the first {sport} title for {city} since {year}, the organisers said.",
        '{Person2} said the crosswind on the final stretch had made the race "a lottery".',
        "{City} {club} beat {City2} {club2} {n1}-{n0} in front of {big} spectators on {day}.",
        "{Person}, the {role} of {City} {club}, praised the defence after a tense second half.",
        "The result lifts {City} {club} to {ordinal} place in the table with {n1} games left to play.",
        "Tickets for the {event} final in {month} are expected to sell out within hours.",
        "The {sport} federation confirmed that next year's championships will also be held in {city}.",
        "{Person2} plans to compete again next season after recovering from a knee injury.",
    ],
}
HEADLINES: dict[str, list[str]] = {
    "council": ["{City} approves funding for {project}", "Council vote clears way for {project} in {city}"],
    "business": ["{Company} profits rise on demand for {product}", "{Company} to open plant near {city}"],
    "weather": ["Disruption across {region} after {weather}", "Roads closed around {city} after {weather}"],
    "science": ["Scientists in {city} report {find}", "Study in {field} finds {find}"],
    "culture": ["{City} museum opens {art}", "Crowds flock to {art} in {city}"],
    "transport": ["Delays hit trains between {city} and {city2}", "Fares to rise on the {city} line"],
    "sports": ["{Person} takes {medal} in {sport} {event}", "{City} {club} beat {City2} {club2}"],
}
ORDINALS = ["second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]


def _cast(rng: random.Random) -> dict[str, str]:
    """One document's fixed cast: the same people, places and organisations throughout."""
    people = [f"{rng.choice(FIRST_NAMES)} {rng.choice(SURNAMES)}" for _ in range(2)]
    city, city2 = rng.sample(CITIES, 2)
    company, company2 = rng.sample(COMPANIES, 2)
    sport, event = rng.choice(SPORTS)
    club, club2 = rng.sample(CLUBS, 2)
    medal, medal2 = rng.sample(MEDALS, 2)
    org = rng.choice(ORGS)
    region = rng.choice(REGIONS)
    weather = rng.choice(WEATHER)
    return {
        "Person": people[0], "Person2": people[1], "city": city, "City": city, "city2": city2, "City2": city2,
        "company": company, "Company": company, "company2": company2, "org": org, "Org": org[0].upper() + org[1:],
        "org_": org.removeprefix("the "), "region": region, "region_cap": region.removeprefix("the ").title(),
        "project": rng.choice(PROJECTS), "product": rng.choice(PRODUCTS), "sport": sport, "event": event,
        "club": club, "club2": club2, "medal": medal, "medal2": medal2, "weather": weather,
        "Weather": weather[0].upper() + weather[1:], "field": rng.choice(FIELDS), "find": rng.choice(FINDS),
        "art": rng.choice(ARTS),
    }  # fmt: skip


def _fill(template: str, cast: dict[str, str], rng: random.Random) -> str:
    values = cast | {
        "n0": str(rng.randint(0, 3)), "n1": str(rng.randint(2, 9)), "n2": str(rng.randint(10, 60)),
        "n3": str(rng.randint(1, 9)), "pct": str(rng.randint(3, 40)), "small": f"{rng.uniform(0.5, 9):.1f}",
        "money": str(rng.randint(12, 950)), "big": f"{rng.randint(1, 90) * 1000 + rng.randint(0, 999):,}",
        "day": rng.choice(DAYS), "month": rng.choice(MONTHS), "year": str(rng.randint(1968, 2024)),
        "age": str(rng.randint(19, 34)), "secs": f"{rng.uniform(0.1, 9.9):.2f}", "ordinal": rng.choice(ORDINALS),
    }  # fmt: skip
    return template.format(**values)


def _story(rng: random.Random) -> str:
    """One short story: a headline, then each of a topic's sentences at most once, in paragraphs of two to four."""
    topic = rng.choice(sorted(TOPICS))
    cast = _cast(rng) | {"role": rng.choice(ROLES[topic])}
    sentences = [_fill(t, cast, rng) for t in rng.sample(TOPICS[topic], rng.randint(6, len(TOPICS[topic])))]
    paragraphs = []
    while sentences:
        take = rng.randint(2, 4)
        paragraphs.append(" ".join(sentences[:take]))
        sentences = sentences[take:]
    return "\n\n".join([_fill(rng.choice(HEADLINES[topic]), cast, rng), *paragraphs])


def article(seed: int, number: int, target_chars: int = 4200) -> str:
    """Document `number` of the corpus of `seed`: a page of local news, short stories each about one topic and
    one cast of people and places, until about `target_chars` characters."""
    rng = random.Random(f"eventbot-distractors:{seed}:{number}")
    stories: list[str] = []
    while sum(len(s) + 2 for s in stories) < target_chars:
        stories.append(_story(rng))
    text = "\n\n".join(stories) + "\n"
    found = FORBIDDEN.search(text)
    if found:  # a word list edited carelessly: fail loudly rather than blur the article's answers
        raise ValueError(f"distractor {number} names the article: {found.group()!r}")
    return text


def write_corpus(folder: Path, documents: int, seed: int = 0, start: int = 0, target_chars: int = 4200) -> list[Path]:
    """Write documents `start` … `start + documents - 1` into `folder` as `news-00000.txt` …; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number in range(start, start + documents):
        path = folder / f"news-{number:05d}.txt"
        path.write_text(article(seed, number, target_chars), encoding="utf-8")
        paths.append(path)
    return paths


def write_large_document(path: Path, min_bytes: int = 300_000, seed: int = 0) -> Path:
    """One long document (a news digest of many stories under their headlines) of at least `min_bytes` bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    parts, size, number = ["News digest"], 0, 0
    while size < min_bytes:
        story = article(seed + 7919, number)  # other stories than the corpus's documents of the same seed
        parts.append(story.strip())
        size += len(story.encode("utf-8")) + 2
        number += 1
    path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return path
