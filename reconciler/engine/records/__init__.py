"""The engine's handle on the records: read and locked (ledger), the stored document and its older
formats (document, formats), changes to the records alone (changes), jobs on the records alone
(jobs: adopt, forget, state mv), and what changed between two versions (diff).
"""
