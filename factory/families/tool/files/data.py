"""What the seeded state of a cloud drive is made of: names, products, templates, wording."""

from __future__ import annotations

COMPANIES = [
    "northwind",
    "bluepeak",
    "larkspur",
    "orbitco",
    "fernhill",
    "quartzline",
    "helio",
    "tidewater",
    "redwood-labs",
    "copperleaf",
]
PARTNERS = [
    "acme-audit.com",
    "globex.io",
    "initech.net",
    "vandelay.co",
    "umbrella-group.com",
    "hooli.org",
    "tyrell-partners.com",
]
PRODUCTS = [
    "Atlas",
    "Beacon",
    "Comet",
    "Drift",
    "Echo",
    "Falcon",
    "Glacier",
    "Helix",
    "Ion",
    "Juniper",
    "Kestrel",
    "Lumen",
]
CLIENTS = [
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "Hooli",
    "Stark",
    "Wayne",
    "Tyrell",
    "Cyberdyne",
    "Vandelay",
    "Wonka",
    "Soylent",
]
CITIES = ["Lisbon", "Austin", "Nairobi", "Osaka", "Krakow", "Toronto", "Lyon", "Pune"]
DEPTS: dict[str, list[str]] = {
    "Finance": [
        "Budget {year}.xlsx",
        "Q{q} {year} forecast.xlsx",
        "Expense report {month}.xlsx",
        "Vendor payments {year}.csv",
        "Audit checklist {year}.docx",
        "Payroll summary {month}.xlsx",
        "Board pack {month}.pdf",
        "Cash flow {year}.xlsx",
    ],
    "Marketing": [
        "Brand guidelines {year}.pdf",
        "{product} launch plan.pptx",
        "Campaign brief {product}.docx",
        "Social calendar {month}.xlsx",
        "Newsletter {month}.docx",
        "{product} one-pager.pdf",
        "Event budget {city}.xlsx",
    ],
    "Engineering": [
        "{product} architecture.md",
        "Oncall runbook {product}.md",
        "{product} API spec.yaml",
        "Postmortem {month} {product}.docx",
        "Load test results {month}.csv",
        "{product} roadmap.pptx",
    ],
    "Legal": [
        "{client} MSA.pdf",
        "NDA {client}.pdf",
        "Privacy policy draft {year}.docx",
        "Trademark filing {product}.pdf",
        "DPA {client}.pdf",
        "{client} contract notes.docx",
    ],
    "People": [
        "Onboarding checklist {year}.docx",
        "Salary bands {year}.xlsx",
        "Holiday calendar {year}.pdf",
        "Offer letter {first} {last}.docx",
        "Org chart {month}.pptx",
        "Training plan {city}.docx",
    ],
    "Sales": [
        "Pricing sheet {year}.xlsx",
        "{client} proposal.docx",
        "Pipeline review Q{q}.pptx",
        "{client} renewal quote.pdf",
        "Territory plan {city}.xlsx",
        "Commission plan {year}.pdf",
    ],
    "Operations": [
        "Office move plan {city}.docx",
        "Supplier list {year}.xlsx",
        "Fleet schedule {month}.csv",
        "Safety audit {city}.pdf",
        "Facilities budget {city}.xlsx",
    ],
}
SUBFOLDERS = [
    "2025",
    "2026",
    "Reports",
    "Drafts",
    "Shared",
    "Templates",
    "Contracts",
    "Planning",
    "Reviews",
    "Exports",
]
NEW_FOLDERS = [
    "{client} onboarding",
    "Q{q} {year} planning",
    "{product} launch",
    "{city} offsite",
    "{year} contracts",
    "{client} renewal",
    "Board meeting {month}",
    "{product} research",
]
TEMPLATES = [
    "Proposal template.docx",
    "Quarterly report template.docx",
    "Slide template.pptx",
    "Budget template.xlsx",
    "Meeting notes template.docx",
    "Project brief template.docx",
]
BIG = [
    "All-hands recording {month}.mp4",
    "{product} demo footage.mov",
    "Design assets {year}.zip",
    "Database export {month}.zip",
    "Customer webinar {month}.mp4",
]
TAGS = ["draft", "final", "review", "q1", "q2", "external", "archive", "budget", "legal"]
KINDS = {
    ".docx": "Word document",
    ".xlsx": "spreadsheet",
    ".pdf": "PDF",
    ".pptx": "slide deck",
    ".csv": "CSV file",
}
SIZES = {
    ".xlsx": (20_000, 2_500_000),
    ".docx": (15_000, 1_800_000),
    ".pdf": (60_000, 9_000_000),
    ".pptx": (900_000, 30_000_000),
    ".csv": (4_000, 5_000_000),
    ".md": (2_000, 40_000),
    ".yaml": (3_000, 60_000),
    ".zip": (400_000_000, 2_500_000_000),
    ".mp4": (500_000_000, 3_000_000_000),
    ".mov": (800_000_000, 3_500_000_000),
}
GIB = 1024**3
MIN_FREE = 200 * 1024**2
