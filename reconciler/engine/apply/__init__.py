"""Running a plan: the executor, phase by phase and journaled (executor, journal), writes of
unknown outcome settled (pending), under the lock with the question asked (applying), and what
an apply leaves in the records besides its writes (bookkeeping).
"""
