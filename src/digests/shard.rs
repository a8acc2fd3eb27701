//! Which share of a run's traces one task digests: `--shard I/N`, else the shard the engine that
//! runs the task gives it — a Slurm job array (`SLURM_ARRAY_TASK_ID` − `SLURM_ARRAY_TASK_MIN` of
//! `SLURM_ARRAY_TASK_COUNT`), `srun -n` (`SLURM_PROCID` of `SLURM_NTASKS`), torchrun (`RANK` of
//! `WORLD_SIZE`), a Kubernetes Indexed Job (`JOB_COMPLETION_INDEX` of `--shards N`) — else the
//! whole run. Trace `i` of the sorted list belongs to shard `i % N`.

use anyhow::{Result, anyhow, bail};

/// Shard `index` of `count`, and where it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
    pub from: String,
}

impl Shard {
    /// One shard: every trace.
    pub fn whole() -> Shard {
        Shard {
            index: 0,
            count: 1,
            from: "the whole run".to_string(),
        }
    }

    /// Whether trace `i` of the sorted list is this shard's.
    pub fn owns(&self, i: usize) -> bool {
        i % self.count == self.index
    }
}

fn number(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Result<Option<usize>> {
    env(name)
        .map(|v| {
            v.trim()
                .parse::<usize>()
                .map_err(|_| anyhow!("{name}={v} is not a number"))
        })
        .transpose()
}

fn checked(index: usize, count: usize, from: String) -> Result<Shard> {
    if count == 0 {
        bail!("{from} gives 0 shards: there must be 1 or more");
    }
    if index >= count {
        bail!(
            "shard {index} of {count} ({from}) does not exist: the shards are 0 to {}",
            count - 1
        );
    }
    Ok(Shard { index, count, from })
}

/// The shard from `--shard I/N` (`arg`), else `--shards N` with `JOB_COMPLETION_INDEX`, else the
/// environment (`env` reads a variable), else the whole run.
pub fn find(
    arg: Option<&str>,
    shards: Option<usize>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Shard> {
    if let Some(text) = arg {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| anyhow!("--shard '{text}' must be I/N, as 0/4"))?;
        let parse = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| anyhow!("--shard '{text}' must be I/N, as 0/4"))
        };
        return checked(parse(i)?, parse(n)?, "--shard".to_string());
    }
    if let Some(n) = shards {
        if n == 0 {
            bail!("--shards 0: there must be 1 shard or more");
        }
        let i = number(env, "JOB_COMPLETION_INDEX")?.ok_or_else(|| {
            anyhow!(
                "--shards {n} needs JOB_COMPLETION_INDEX (a Kubernetes Indexed Job), or --shard I/N"
            )
        })?;
        return checked(i, n, "JOB_COMPLETION_INDEX of --shards".to_string());
    }
    if let (Some(id), Some(count)) = (
        number(env, "SLURM_ARRAY_TASK_ID")?,
        number(env, "SLURM_ARRAY_TASK_COUNT")?,
    ) {
        let min = number(env, "SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let index = id.checked_sub(min).ok_or_else(|| {
            anyhow!("SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}")
        })?;
        return checked(
            index,
            count,
            "SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT".to_string(),
        );
    }
    let pairs = [("SLURM_PROCID", "SLURM_NTASKS"), ("RANK", "WORLD_SIZE")];
    for (id, count) in pairs {
        if let (Some(i), Some(n)) = (number(env, id)?, number(env, count)?) {
            return checked(i, n, format!("{id} of {count}"));
        }
    }
    Ok(Shard::whole())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn each_engine_names_its_shard() -> Result<()> {
        let s = |arg, shards, vars| find(arg, shards, &env_of(vars)).map(|s| (s.index, s.count));
        assert_eq!(s(Some("2/5"), None, &[])?, (2, 5));
        let array = &[
            ("SLURM_ARRAY_TASK_ID", "11"),
            ("SLURM_ARRAY_TASK_MIN", "10"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
        ];
        assert_eq!(s(None, None, array)?, (1, 4));
        assert_eq!(
            s(None, None, &[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "2")])?,
            (1, 2)
        );
        assert_eq!(
            s(None, None, &[("RANK", "3"), ("WORLD_SIZE", "8")])?,
            (3, 8)
        );
        assert_eq!(s(None, Some(6), &[("JOB_COMPLETION_INDEX", "5")])?, (5, 6));
        assert_eq!(s(None, None, &[])?, (0, 1));
        Ok(())
    }

    #[test]
    fn impossible_shards_are_refused() {
        let none = env_of(&[]);
        assert!(find(Some("4/4"), None, &none).is_err());
        assert!(find(Some("x"), None, &none).is_err());
        assert!(find(None, Some(3), &none).is_err());
        assert!(find(None, None, &env_of(&[("RANK", "a"), ("WORLD_SIZE", "2")])).is_err());
    }

    #[test]
    fn shards_are_disjoint_and_complete() {
        let shards: Vec<Shard> = (0..3)
            .map(|index| Shard {
                index,
                count: 3,
                from: String::new(),
            })
            .collect();
        for i in 0..10 {
            assert_eq!(shards.iter().filter(|s| s.owns(i)).count(), 1);
        }
    }
}
