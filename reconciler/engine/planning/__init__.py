"""From a comparison to a sealed plan: compare (diff), plan (planner), guard (safety, renames,
policy), the plan as a type and a file (plan, changes_format, plan_file, plan_key,
manifest_snapshot, facts), a saved plan checked again (saved).
"""
