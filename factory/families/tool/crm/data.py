"""What the seeded state of a sales CRM is made of: names, products, templates, wording."""

from __future__ import annotations

SELLERS = [
    ("Nimbus Analytics", "nimbus-analytics.com"),
    ("Brightpath Software", "brightpath.io"),
    ("Orbital Data", "orbitaldata.com"),
    ("Quillstack", "quillstack.com"),
    ("Tessellate Cloud", "tessellate.cloud"),
]
CUSTOMERS = [
    ("Acme Logistics", "Logistics"),
    ("Globex Retail", "Retail"),
    ("Initech Systems", "Software"),
    ("Umbrella Health", "Healthcare"),
    ("Hooli Media", "Media"),
    ("Stark Manufacturing", "Manufacturing"),
    ("Wayne Foods", "Food"),
    ("Tyrell Biotech", "Biotech"),
    ("Cyberdyne Robotics", "Robotics"),
    ("Vandelay Imports", "Wholesale"),
    ("Wonka Confectionery", "Food"),
    ("Soylent Farms", "Agriculture"),
    ("Pied Piper Labs", "Software"),
    ("Dunder Paper", "Wholesale"),
    ("Massive Dynamic", "Research"),
    ("Oscorp Energy", "Energy"),
]
PRODUCTS = [
    "Analytics Pro",
    "Data Hub",
    "Insights Suite",
    "Reporting Cloud",
    "Forecast AI",
    "Pipeline Sync",
]
DEAL_NAMES = [
    "{product} rollout",
    "{product} renewal",
    "{product} expansion",
    "{product} pilot",
    "Support upgrade",
    "Training package",
    "{seats} seats of {product}",
    "Enterprise licence",
    "{product} add-on",
]
TITLES = [
    "Head of Procurement",
    "VP of Operations",
    "IT Director",
    "CFO",
    "Purchasing Manager",
    "Chief Data Officer",
    "Operations Lead",
    "Head of Analytics",
    "COO",
    "Director of Finance",
    "Senior Buyer",
    "Head of IT",
]
SUMMARIES = [
    "Discussed the rollout timeline",
    "Asked for a revised quote",
    "Interested in the forecasting add-on",
    "Budget approved for next quarter",
    "Wants a security review before signing",
    "Needs SSO support confirmed",
    "Comparing us with two other vendors",
    "Legal is reviewing the contract",
    "Asked for customer references",
    "Wants to start with a smaller pilot",
]
TASK_TITLES = [
    "Call {first} about the renewal",
    "Send {first} the security questionnaire",
    "Follow up with {first} on pricing",
    "Check in with {first} after the demo",
    "Book a workshop with {first}",
    "Ask {first} for the signed order form",
]
TEMPLATES = [
    (
        "Quote follow-up",
        "Your quote {quote_number}",
        "Hi {first_name},\n\nI wanted to follow up on quote {quote_number} for {company}. Happy to "
        "walk you through it whenever suits you.\n\nBest,\n{sender_name}",
        ["quote_number"],
    ),
    (
        "Quote reminder",
        "Quote {quote_number} expires soon",
        "Hi {first_name},\n\nA quick reminder that quote {quote_number} for {company} expires at "
        "the end of the month.\n\nRegards,\n{sender_name}",
        ["quote_number"],
    ),
    (
        "Invoice reminder",
        "Invoice {invoice_number} is due",
        "Hi {first_name},\n\nInvoice {invoice_number} for {company} is due this week. Let me know "
        "if anything is unclear.\n\n{sender_name}",
        ["invoice_number"],
    ),
    (
        "Payment received",
        "Thank you for paying invoice {invoice_number}",
        "Hi {first_name},\n\nWe received the payment for invoice {invoice_number}. Thank you, "
        "{company}!\n\n{sender_name}",
        ["invoice_number"],
    ),
    (
        "Demo invite",
        "Your product demo",
        "Hi {first_name},\n\nLooking forward to showing {company} around. Join here: "
        "{meeting_link}\n\n{sender_name}",
        ["meeting_link"],
    ),
    (
        "Meeting recap",
        "Recap of our meeting",
        "Hi {first_name},\n\nThanks for your time today. The recording is at {meeting_link}.\n\n"
        "{sender_name}",
        ["meeting_link"],
    ),
    (
        "Welcome aboard",
        "Welcome aboard, {company}!",
        "Hi {first_name},\n\nWelcome aboard! I will be your contact for anything you need.\n\n"
        "{sender_name}",
        [],
    ),
]
PAIRS = [
    ("Quote follow-up", "Quote reminder"),
    ("Quote reminder", "Quote follow-up"),
    ("Invoice reminder", "Payment received"),
    ("Payment received", "Invoice reminder"),
    ("Demo invite", "Meeting recap"),
    ("Meeting recap", "Demo invite"),
]
LABELS = {"quote_number": "quote", "invoice_number": "invoice", "meeting_link": "link"}
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
